#!/usr/bin/env bash
# What a TLS server's own code costs, counted rather than timed: muon's and
# Asio's pingpong servers with --tls under callgrind, loaded by the same muon
# clients. Usage: help_text below.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=tls_callgrind

synopsis() {
  cat <<'EOF'
tls_callgrind.sh BUILD_DIR
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

Each server (pingpong_server, asio_pingpong_server: --tls, one thread) runs
under valgrind --tool=callgrind twice, loaded for a short and a long run; the
difference in the server's instructions over the difference in work is its
cost per unit, without start-up and shutdown:
  - per full handshake (tls_load handshakes, 4 at a time, 2 s and 6 s);
  - per MiB echoed, blocks 4096 and 16384, 10 sessions (pingpong_client
    --tls, 2 s and 6 s).
Valgrind runs the servers some 50 times slower: the loads are small. TLS
1.3 TLS_AES_128_GCM_SHA256, a CA and certificate made by openssl.
Markdown to stdout, progress to stderr.
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"
take_build_dir "${1:-}"
bin=$build/bin
command -v valgrind >/dev/null || die "needs valgrind (Debian package valgrind)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tls_callgrind.XXXXXX")
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
"$here/make_tls_certificates.sh" "$tmp" || die "openssl failed"

# measure SERVER SECONDS LOAD...: prints "WORK INSTRUCTIONS", WORK being the
# first number of the load's output line matching the load's pattern.
measure() {
  local server=$1 seconds=$2 kind=$3 port= i work ir
  rm -f "$tmp"/cg.out.* "$tmp/server.out"
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out.%p" "$bin/$server" \
    --tls "$tmp/server.pem" "$tmp/server.key" 127.0.0.1 0 1 >"$tmp/server.out" 2>"$tmp/valgrind.err" &
  server_pid=$!
  for ((i = 0; i < 300; i++)); do
    port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.out" 2>/dev/null || true)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || die "$server did not start under valgrind"
  case $kind in
    handshakes) work=$("$bin/tls_load" handshakes "$tmp/ca.pem" 127.0.0.1 "$port" 4 "$seconds" | awk '{print $1}') ;;
    *) work=$("$bin/pingpong_client" --tls "$tmp/ca.pem" 127.0.0.1 "$port" 1 "$kind" 10 "$seconds" \
                | awk '/total bytes read/ {print $1}') ;;
  esac
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
  ir=$(awk '/^summary:/ {print $2}' "$tmp"/cg.out.*)
  echo "$work $ir"
}

# marginal SERVER KIND: instructions per unit of work (per handshake, or per MiB).
marginal() {
  local short long
  echo "== $1 $2" >&2
  short=$(measure "$1" 2 "$2")
  long=$(measure "$1" 6 "$2")
  awk -v s="$short" -v l="$long" -v kind="$2" 'BEGIN {
    split(s, a, " "); split(l, b, " ")
    unit = (kind == "handshakes") ? 1 : 1048576
    printf "%.0f", (b[2] - a[2]) / ((b[1] - a[1]) / unit) }'
}

echo "Server instructions (callgrind), TLS 1.3 AES-128-GCM, one thread:"
echo
echo "| work | muon | asio | muon/asio |"
echo "|---|--:|--:|--:|"
for kind in handshakes 4096 16384; do
  m=$(marginal pingpong_server "$kind")
  a=$(marginal asio_pingpong_server "$kind")
  case $kind in
    handshakes) label="per full handshake" ;;
    *) label="per MiB echoed, $kind-byte blocks, 10 sessions" ;;
  esac
  echo "| $label | $m | $a | $(awk -v m="$m" -v a="$a" 'BEGIN{printf "%.2f", m / a}') |"
done
