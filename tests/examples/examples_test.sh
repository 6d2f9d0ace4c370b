#!/usr/bin/env bash
# examples_test.sh BIN_DIR CASE
# The example programs as a user runs them: command lines, the lines they
# print (scripts parse them), clean stops. Loopback only, ports from the
# kernel (PORT 0, read back from the "listening on" line).
#   echo          echo_server echoes a line and 1 MiB byte for byte, logs each
#                 connection UP and DOWN (with its name, a LogContext field), and stops on SIGTERM with status 0
#   interop       each pingpong client against each pingpong server (muon and
#                 Boost.Asio): the four result lines, with bytes really moved
#   interop-uring the same with the io_uring programs too (muon's engine,
#                 Asio's twins); skipped (77) where io_uring is refused
#   interop-uring the same with the io_uring programs too (muon's engine,
#                 Asio's twins); skipped (77) where io_uring is refused
#   interop-tls   the same over TLS (--tls; muon on epoll and io_uring, Asio
#                 on epoll), with a CA and certificate made by openssl; a
#                 client that does not trust the server's certificate exits
#                 non-zero naming the problem
#   bad-args      every program refuses bad arguments with usage, status 2
set -euo pipefail
bin=$1 case=$2
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The engine muon's programs use: NAME+uring runs NAME on io_uring.
engine_of() {
  case $1 in
    *+uring) echo MUON_USE_URING=1 ;;
    *) echo MUON_USE_URING=0 ;;
  esac
}

# start_server NAME OUT ARGS...: starts it in the background and sets $port
# from its "listening on ADDRESS:PORT" line.
start_server() {
  local name=$1 out=$2
  shift 2
  env "$(engine_of "$name")" "$bin/${name%+uring}" "$@" >"$out" 2>&1 &
  pids+=($!)
  server_pid=$!
  for _ in $(seq 1 500); do
    port=$(grep -Eo 'listening on [^ ]*:[0-9]+' "$out" | head -1 | sed 's/.*://') || true
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$out" >&2; fail "$name exited at start"; }
    sleep 0.01
  done
  cat "$out" >&2
  fail "$name printed no 'listening on' line"
}

case_echo() {
  start_server echo_server "$work/echo.log" 0 2
  # A line, as with `nc`.
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'hello muon\n' >&3
  IFS= read -r -t 10 reply <&3 || fail "no reply from echo_server"
  [ "$reply" = "hello muon" ] || fail "echoed '$reply'"
  exec 3>&-
  # 1 MiB of random bytes, written while the echo is read back.
  head -c $((1 << 20)) /dev/urandom >"$work/sent"
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  cat "$work/sent" >&3 &
  local writer=$!
  timeout 20 head -c $((1 << 20)) <&3 >"$work/received" || fail "echo of 1 MiB timed out"
  wait "$writer"
  exec 3>&-
  cmp -s "$work/sent" "$work/received" || fail "1 MiB came back different"
  kill -TERM "$server_pid"
  local status=0
  timeout 10 tail --pid="$server_pid" -f /dev/null || fail "echo_server did not stop on SIGTERM"
  wait "$server_pid" || status=$?
  [ "$status" -eq 0 ] || fail "echo_server exited with $status after SIGTERM"
  [ "$(grep -Ec ' is UP conn=[^ ]+ - ' "$work/echo.log")" -eq 2 ] || fail "expected 2 UP lines"
  [ "$(grep -Ec ' is DOWN conn=[^ ]+ - ' "$work/echo.log")" -eq 2 ] || fail "expected 2 DOWN lines"
  grep -q 'echo_server stopping on signal 15' "$work/echo.log" || fail "no stop line"
  cat "$work/echo.log"
}

# Each client against each server (lists of programs; NAME+uring is muon's
# program on its io_uring engine, MUON_USE_URING=1): the four result lines,
# with bytes really moved. Only the pairs with an io_uring side when the
# third argument is "uring-only".
# server_args / client_args: what goes before ADDRESS (--tls and its files
# in case_interop_tls).
server_args=() client_args=()
interop() {
  local servers=$1 clients=$2 filter=${3:-} server client out
  for server in $servers; do
    start_server "$server" "$work/$server.log" "${server_args[@]}" 127.0.0.1 0 2
    for client in $clients; do
      if [ "$filter" = uring-only ] && [[ "$server$client" != *uring* ]]; then continue; fi
      out="$work/$client-$server.out"
      timeout 30 env "$(engine_of "$client")" "$bin/${client%+uring}" "${client_args[@]}" 127.0.0.1 "$port" 2 4096 10 0.3 \
        >"$out" 2>&1 || { cat "$out" >&2; fail "$client against $server failed"; }
      grep -Eq '^[1-9][0-9]* total bytes read$' "$out" || { cat "$out" >&2; fail "$client: bytes line"; }
      grep -Eq '^[1-9][0-9]* total messages read$' "$out" || { cat "$out" >&2; fail "$client: messages line"; }
      grep -Eq '^[0-9.]+ average message size$' "$out" || { cat "$out" >&2; fail "$client: size line"; }
      grep -Eq '^[0-9.]+ MiB/s throughput$' "$out" || { cat "$out" >&2; fail "$client: throughput line"; }
      echo "$client -> $server: $(tr '\n' ';' <"$out")"
    done
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
  done
}

case_interop() {
  interop "pingpong_server asio_pingpong_server" "pingpong_client asio_pingpong_client"
}

# The io_uring programs (muon's engine, Asio's io_uring twins) against each
# other and against the epoll ones. Exit 77 (ctest: skipped) with the reason
# when this machine refuses io_uring to Asio.
case_interop_uring() {
  [ -x "$bin/asio_pingpong_server_uring" ] || { echo "SKIP: Asio io_uring twins not built" >&2; exit 77; }
  local probe=$work/probe.log
  "$bin/asio_pingpong_server_uring" 127.0.0.1 0 1 >"$probe" 2>&1 &
  local pid=$!
  for _ in $(seq 1 500); do
    grep -q 'listening on' "$probe" && break
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null || true
      echo "SKIP: io_uring unavailable to Asio: $(cat "$probe")" >&2
      exit 77
    fi
    sleep 0.01
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local all="pingpong_server pingpong_server+uring asio_pingpong_server asio_pingpong_server_uring"
  interop "$all" "$(echo "$all" | sed 's/server/client/g')" uring-only
}

case_interop_tls() {
  command -v openssl >/dev/null || { echo "SKIP: no openssl command (Debian package openssl)" >&2; exit 77; }
  "$(dirname "$0")/../../examples/bench/make_tls_certificates.sh" "$work" || fail "openssl failed"
  server_args=(--tls "$work/server.pem" "$work/server.key")
  client_args=(--tls "$work/ca.pem")
  local all="pingpong_server pingpong_server+uring asio_pingpong_server"
  interop "$all" "$(echo "$all" | sed 's/server/client/g')"
  # A CA that did not sign the server's certificate: refused, and said why.
  start_server pingpong_server "$work/untrusted.log" "${server_args[@]}" 127.0.0.1 0 1
  local client status
  for client in pingpong_client asio_pingpong_client; do
    status=0
    timeout 30 "$bin/$client" --tls "$work/stranger.pem" 127.0.0.1 "$port" 1 4096 2 0.3 \
      >"$work/untrusted.out" 2>&1 || status=$?
    [ "$status" -ne 0 ] || { cat "$work/untrusted.out" >&2; fail "$client trusted a stranger's certificate"; }
    grep -q 'certificate verify failed' "$work/untrusted.out" \
      || { cat "$work/untrusted.out" >&2; fail "$client did not name the certificate problem"; }
    echo "$client, untrusted: $(grep -m1 'certificate verify failed' "$work/untrusted.out")"
  done
}

# expect_usage PROGRAM ARGS...: refused with status 2 and a usage line.
expect_usage() {
  local name=$1 status=0
  shift
  timeout 10 "$bin/$name" "$@" >"$work/out" 2>&1 || status=$?
  [ "$status" -eq 2 ] || { cat "$work/out" >&2; fail "$name $*: status $status, expected 2"; }
  grep -qi 'usage' "$work/out" || fail "$name $*: no usage text"
}

case_bad_args() {
  expect_usage echo_server
  expect_usage echo_server abc
  expect_usage echo_server 70000
  expect_usage echo_server 0 -1
  expect_usage echo_server 0 2 extra
  local server client
  for server in pingpong_server asio_pingpong_server; do
    expect_usage "$server" 127.0.0.1 0
    expect_usage "$server" 127.0.0.1 80x 1
    expect_usage "$server" 127.0.0.1 0 0
    expect_usage "$server" not-an-address 0 1
  done
  for client in pingpong_client asio_pingpong_client; do
    expect_usage "$client" 127.0.0.1 1 1 4096 10
    expect_usage "$client" 127.0.0.1 0 1 4096 10 1
    expect_usage "$client" 127.0.0.1 1 1 0 10 1
    expect_usage "$client" 127.0.0.1 1 1 4096 10 1s
  done
  echo "every bad command line refused with usage and status 2"
}

case "$case" in
  echo) case_echo ;;
  interop) case_interop ;;
  interop-uring) case_interop_uring ;;
  interop-tls) case_interop_tls ;;
  bad-args) case_bad_args ;;
  *) fail "unknown case '$case'" ;;
esac
