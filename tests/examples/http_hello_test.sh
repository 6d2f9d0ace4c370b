#!/usr/bin/env bash
# http_hello_test.sh BIN_DIR SERVER [ENV...]
# The HTTP benchmark's servers (http_hello_server, beast_hello_server) as
# the benchmark runs them (bad command lines first: usage, status 2): PORT 0 read back from "listening on", GET / with
# curl (status, the 13-byte body, the headers both must send), two URLs on one
# kept-alive connection, 404 elsewhere, then a clean stop on SIGTERM.
# ENV (e.g. MUON_USE_URING=1) goes to the server's environment.
set -euo pipefail
bin=$1 server=$2
shift 2
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill -9 "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl is not installed (./build.sh installs it)"; exit 77; }

# Bad command lines: usage on stderr, status 2.
for args in "" "0" "abc 1" "70000 1" "0 0" "0 257" "0 1 extra"; do
  status=0
  # shellcheck disable=SC2086  # the words of $args are the arguments
  "$bin/$server" $args >/dev/null 2>"$work/usage" || status=$?
  [ "$status" -eq 2 ] && grep -q '^Usage: ' "$work/usage" || fail "'$server $args' gave status $status"
done

env "$@" "$bin/$server" 0 2 >"$work/out" 2>&1 &
server_pid=$!
port=
for _ in $(seq 1 500); do
  port=$(grep -Eo 'listening on 127\.0\.0\.1:[0-9]+' "$work/out" | head -1 | sed 's/.*://') || true
  [ -n "$port" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/out" >&2; fail "$server exited at start"; }
  sleep 0.01
done
[ -n "$port" ] || fail "$server printed no 'listening on' line"
url=http://127.0.0.1:$port

curl -sS --max-time 10 -D "$work/head" -o "$work/body" "$url/" || fail "curl $url/ failed"
tr -d '\r' <"$work/head" >"$work/fields"
cat "$work/fields"
grep -qx 'HTTP/1.1 200 OK' "$work/fields" || fail "status is not 200 OK"
[ "$(cat "$work/body")" = "Hello, World!" ] && [ "$(wc -c <"$work/body")" -eq 13 ] \
  || fail "body is '$(cat "$work/body")'"
grep -qix 'content-type: text/plain' "$work/fields" || fail "no Content-Type: text/plain"
grep -qix 'content-length: 13' "$work/fields" || fail "no Content-Length: 13"
grep -qi '^server: ' "$work/fields" || fail "no Server field"
grep -qix 'connection: keep-alive' "$work/fields" || fail "no Connection: keep-alive"

# Two URLs in one curl run share the kept-alive connection: one connect.
out=$(curl -sS --max-time 10 -o /dev/null -o /dev/null -w '%{http_code}:%{num_connects} ' "$url/" "$url/")
[ "$out" = "200:1 200:0 " ] || fail "keep-alive: curl says '$out'"
code=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "$url/nothing")
[ "$code" = 404 ] || fail "GET /nothing answered $code"

kill -TERM "$server_pid"
status=0
timeout 10 tail --pid="$server_pid" -f /dev/null || fail "$server did not stop on SIGTERM"
wait "$server_pid" || status=$?
server_pid=
[ "$status" -eq 0 ] || fail "$server exited with $status after SIGTERM"
echo "$server: ok"
