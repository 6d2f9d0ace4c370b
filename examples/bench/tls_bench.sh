#!/usr/bin/env bash
# The TLS pingpong table: muon's pair over TLS against Asio's pair over TLS
# (asio::ssl::stream), TLS 1.3 AES-128-GCM on both, with muon's plain TCP
# pair as the reference row (what TLS costs). Usage: help_text below.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=tls_bench

synopsis() {
  cat <<'EOF'
tls_bench.sh BUILD_DIR [--quick] [--seconds S] [--repeat R] [--sessions LIST] [--blocks LIST]
             [--threads LIST] [--idle N]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

Pairs (client and server of one framework), per threads x block x sessions:
  muon-tcp   pingpong_server / pingpong_client, plain TCP (the reference)
  muon-tls   the same with --tls (epoll)
  muon-tls-uring  the same on io_uring (MUON_USE_URING=1)
  asio-tls   asio_pingpong_server / asio_pingpong_client with --tls (epoll)
  asio-tls-uring  their io_uring builds (_uring) with --tls
Defaults: --seconds 3 --repeat 3 --sessions 1,10,100,1000 --blocks 4096,16384
--threads 1,2; --quick: 1 s, one run, sessions 1,100. Runs of one point are
interleaved (pair after pair, R times) and the median MiB/s is reported.
Then, for muon's and Asio's TLS servers (one thread): full handshakes per
second (tls_load handshakes, 4 at a time, no resumption, S seconds), and the
server's RSS per idle TLS connection with N of them open (tls_load idle;
--idle, default 10000; --quick 1000): VmRSS after minus before, over N.
The CA and server certificate (EC P-256, for 127.0.0.1) are made with the
openssl command into a temporary directory. Markdown to stdout, progress to
stderr, BUILD_DIR/bench/tls.csv and tls_server.csv.
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
bin=$build/bin
out=$build/bench
seconds=3 repeat=3 sessions_list=1,10,100,1000 blocks_list=4096,16384 threads_list=1,2
quick=0 idle=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --seconds) need_value $#; seconds=$2; shift ;;
    --repeat) need_value $#; repeat=$2; shift ;;
    --sessions) need_value $#; sessions_list=$2; shift ;;
    --blocks) need_value $#; blocks_list=$2; shift ;;
    --threads) need_value $#; threads_list=$2; shift ;;
    --idle) need_value $#; idle=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
[ $quick -eq 1 ] && { seconds=1; repeat=1; sessions_list=1,100; idle=1000; }
want_count --repeat "$repeat"
want_count --idle "$idle"
IFS=, read -r -a sessions_arr <<<"$sessions_list"
IFS=, read -r -a blocks_arr <<<"$blocks_list"
IFS=, read -r -a threads_arr <<<"$threads_list"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tls_bench.XXXXXX")
server_pid= load_pid=
cleanup() {
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

"$here/make_tls_certificates.sh" "$tmp" || die "openssl failed"

# label server client tls(0/1) environment ("-": none)
pairs=("muon-tcp pingpong_server pingpong_client 0 -"
       "muon-tls pingpong_server pingpong_client 1 -"
       "muon-tls-uring pingpong_server pingpong_client 1 MUON_USE_URING=1"
       "asio-tls asio_pingpong_server asio_pingpong_client 1 -"
       "asio-tls-uring asio_pingpong_server_uring asio_pingpong_client_uring 1 -")

# start_server SERVER TLS(0/1) THREADS [VAR=VALUE...]: starts it in the
# background; sets $server_pid (the server's own, not a wrapper's: its RSS
# is read; cleanup stops it whatever happens) and $port (empty if it did not
# start).
start_server() {
  local server=$1 tls=$2 threads=$3 i args=()
  shift 3
  [ "$tls" = 1 ] && args=(--tls "$tmp/server.pem" "$tmp/server.key")
  port=
  rm -f "$tmp/server.out"
  env "$@" "$bin/$server" "${args[@]}" 127.0.0.1 0 "$threads" >"$tmp/server.out" 2>"$tmp/server.err" &
  server_pid=$!
  for ((i = 0; i < 100; i++)); do
    port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.out" 2>/dev/null || true)
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || echo "  $server did not start: $(head -c 200 "$tmp/server.err")" >&2
}
stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

# run_one SERVER CLIENT TLS ENV THREADS BLOCK SESSIONS: prints MiB/s, or
# nothing (reason on stderr).
run_one() {
  local server=$1 client=$2 tls=$3 envs=() c_args=()
  [ "$4" = - ] || IFS=, read -r -a envs <<<"$4"
  [ -x "$bin/$server" ] && [ -x "$bin/$client" ] || { echo "  $server/$client not built" >&2; return 0; }
  [ "$tls" = 1 ] && c_args=(--tls "$tmp/ca.pem")
  start_server "$server" "$tls" "$5" "${envs[@]}"
  if [ -n "$port" ]; then
    timeout -k 2 $((${seconds%.*} + 60)) env "${envs[@]}" "$bin/$client" "${c_args[@]}" 127.0.0.1 "$port" \
      "$5" "$6" "$7" "$seconds" >"$tmp/client.out" 2>"$tmp/client.err" \
      && awk '$2 == "MiB/s" {print $1}' "$tmp/client.out" \
      || echo "  $client failed: $(tail -n 1 "$tmp/client.err")" >&2
  fi
  stop_server
}

csv=$out/tls.csv
join_csv threads block sessions pair run mib_s >"$csv"
for threads in "${threads_arr[@]}"; do
  for block in "${blocks_arr[@]}"; do
    for sessions in "${sessions_arr[@]}"; do
      echo "== threads $threads block $block sessions $sessions" >&2
      for ((r = 1; r <= repeat; r++)); do
        for p in "${pairs[@]}"; do
          read -r label server client tls envs <<<"$p"
          mibs=$(run_one "$server" "$client" "$tls" "$envs" "$threads" "$block" "$sessions")
          [ -n "$mibs" ] && join_csv "$threads" "$block" "$sessions" "$label" "$r" "$mibs" >>"$csv"
        done
      done
    done
  done
done

echo "Pairs, MiB/s (median of $repeat, ${seconds} s each); TLS 1.3 TLS_AES_128_GCM_SHA256 on both."
echo
echo "| threads | block | sessions | muon tcp | muon tls | muon tls io_uring | asio tls | asio tls io_uring | muon tls/asio tls | muon tls/tcp |"
echo "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
for threads in "${threads_arr[@]}"; do
  for block in "${blocks_arr[@]}"; do
    for sessions in "${sessions_arr[@]}"; do
      row=()
      for label in muon-tcp muon-tls muon-tls-uring asio-tls asio-tls-uring; do
        row+=("$(awk -F, -v t="$threads" -v b="$block" -v s="$sessions" -v l="$label" \
          "$csv_header"' $col["threads"] == t && $col["block"] == b && $col["sessions"] == s && $col["pair"] == l { print $col["mib_s"] }' \
          "$csv" | median_fmt '%.1f')")
      done
      ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else printf "-" }'; }
      echo "| $threads | $block | $sessions | ${row[0]:--} | ${row[1]:--} | ${row[2]:--} | ${row[3]:--} | ${row[4]:--} | $(ratio "${row[1]}" "${row[3]}") | $(ratio "${row[1]}" "${row[0]}") |"
    done
  done
done

rss_kib() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status"; }

echo
echo "Full handshakes per second (one server thread, TLS 1.3, X25519, ECDSA P-256, 4 at a time), and"
echo "the server's RSS per idle TLS connection ($idle open), medians of $repeat:"
echo
echo "| server | handshakes/s | RSS bytes per idle connection |"
echo "|---|--:|--:|"
hs_csv=$out/tls_server.csv
join_csv server run handshakes_per_s rss_bytes_per_conn >"$hs_csv"
for ((r = 1; r <= repeat; r++)); do
  for server in pingpong_server asio_pingpong_server; do
    [ -x "$bin/$server" ] && [ -x "$bin/tls_load" ] || { echo "  $server or tls_load not built" >&2; continue; }
    echo "== $server: handshakes, run $r" >&2
    start_server "$server" 1 1
    [ -n "$port" ] || { stop_server; continue; }
    rate=$(timeout -k 2 $((${seconds%.*} + 30)) "$bin/tls_load" handshakes "$tmp/ca.pem" 127.0.0.1 "$port" 4 "$seconds" \
             2>"$tmp/load.err" | awk '{print $(NF - 2)}') || true
    [ -n "$rate" ] || echo "  tls_load handshakes failed: $(tail -n 1 "$tmp/load.err")" >&2
    stop_server
    echo "== $server: $idle idle connections, run $r" >&2
    start_server "$server" 1 1
    [ -n "$port" ] || { stop_server; continue; }
    before=$(rss_kib "$server_pid")
    "$bin/tls_load" idle "$tmp/ca.pem" 127.0.0.1 "$port" "$idle" >"$tmp/idle.out" 2>"$tmp/idle.err" &
    load_pid=$!
    for ((i = 0; i < 1200; i++)); do
      grep -q 'connections up' "$tmp/idle.out" 2>/dev/null && break
      kill -0 "$load_pid" 2>/dev/null || break
      sleep 0.1
    done
    per_conn=
    if grep -q 'connections up' "$tmp/idle.out"; then
      sleep 1
      per_conn=$(awk -v a="$before" -v b="$(rss_kib "$server_pid")" -v n="$idle" 'BEGIN{printf "%.0f", (b - a) * 1024 / n}')
    else
      echo "  tls_load idle failed: $(tail -n 1 "$tmp/idle.err")" >&2
    fi
    kill "$load_pid" 2>/dev/null || true
    wait "$load_pid" 2>/dev/null || true
    load_pid=
    stop_server
    join_csv "$server" "$r" "$rate" "$per_conn" >>"$hs_csv"
  done
done
for server in pingpong_server asio_pingpong_server; do
  hs=$(awk -F, -v s="$server" "$csv_header"' $col["server"] == s && $col["handshakes_per_s"] != "" { print $col["handshakes_per_s"] }' "$hs_csv" | median_fmt '%.0f')
  rss=$(awk -F, -v s="$server" "$csv_header"' $col["server"] == s && $col["rss_bytes_per_conn"] != "" { print $col["rss_bytes_per_conn"] }' "$hs_csv" | median_fmt '%.0f')
  label=muon
  [ "$server" = pingpong_server ] || label=asio
  echo "| $label | ${hs:--} | ${rss:--} |"
done
