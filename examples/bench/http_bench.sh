#!/usr/bin/env bash
# The HTTP benchmark: wrk against muon's HttpServer (epoll and io_uring) and
# its Boost.Beast twin, all answering "Hello, World!" over kept-alive
# connections. What it runs and writes: help_text below (http_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=http_bench

synopsis() {
  cat <<'EOF2'
http_bench.sh BUILD_DIR [--quick] [--seconds S] [--repeat R] [--threads LIST]
              [--connections LIST] [--wrk-threads N]
EOF2
}

help_text() {
  synopsis
  cat <<'EOF2'

For every point (server threads x connections) and every repeat it runs,
one after the other and interleaved so that a change in machine load hits
all alike, wrk against each server:
  muon         http_hello_server PORT THREADS (epoll)
  muon-uring   the same with MUON_USE_URING=1
  beast        beast_hello_server PORT THREADS (Boost.Beast, io_context per thread)
  floor        http_floor_server PORT THREADS (raw epoll, one recv and one send
               per batch of requests, no parser: the ceiling on this machine)
Each server binds 127.0.0.1 port 0 and prints the port it got; wrk runs
  wrk -t W -c CONNECTIONS -d S --latency http://127.0.0.1:PORT/
(W = --wrk-threads, default 2, at most CONNECTIONS): keep-alive, GET /, the
13-byte body. wrk and the server share the machine's CPUs. Every child runs
under timeout(1) and is reaped, so a failed run is reported and never hangs.

It takes /tmp/muon-bench.lock exclusively for the whole run, so that no
build or other benchmark shares the machine meanwhile (run under an outer
`flock /tmp/muon-bench.lock ...` it uses that lock instead of waiting for it).
MUON_BENCH_LOCK=FILE takes FILE instead: for a smoke run that must not wait
for the machine, never for figures.

Progress goes to stderr; to stdout, a markdown table of the medians of the
repeats: requests/s and p99 latency per server, the ratios muon/beast
and muon-uring/beast, and, in the last columns, the floor's requests/s and
what muon and Beast reach of it. Files, in BUILD_DIR/bench/:
  http.csv       one row per point and server: medians, runs, failures
  http_runs.csv  one row per run
Defaults: threads 1,2; connections 10,100,1000; 5 s per run, 3 repeats:
72 runs, about 7 minutes. --quick: 2 s, 1 repeat (24 runs, under a minute).
EOF2
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
bin=$build/bin
out=$build/bench

seconds=5 repeat=3 threads_list=1,2 connections_list=10,100,1000 wrk_threads=2
quick=0 seconds_set=0 repeat_set=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --seconds) need_value $#; seconds=$2; seconds_set=1; shift ;;
    --repeat) need_value $#; repeat=$2; repeat_set=1; shift ;;
    --threads) need_value $#; threads_list=$2; shift ;;
    --connections) need_value $#; connections_list=$2; shift ;;
    --wrk-threads) need_value $#; wrk_threads=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
if [ $quick -eq 1 ]; then
  [ $seconds_set -eq 1 ] || seconds=2
  [ $repeat_set -eq 1 ] || repeat=1
fi
want_count --seconds "$seconds"
want_count --repeat "$repeat"
want_count --wrk-threads "$wrk_threads"
for list in "$threads_list" "$connections_list"; do
  [[ $list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad list '$list' (want e.g. 10,100)"
done
IFS=, read -r -a threads_arr <<<"$threads_list"
IFS=, read -r -a connections_arr <<<"$connections_list"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk; ./build.sh bench installs it)"

# The servers: label, program, environment ("-": none).
servers=("muon http_hello_server -"
         "muon-uring http_hello_server MUON_USE_URING=1"
         "beast beast_hello_server -"
         "floor http_floor_server -")
for prog in http_hello_server beast_hello_server http_floor_server; do
  [ -x "$bin/$prog" ] || echo "$bench_name: $bin/$prog is not built; its runs will fail" >&2
done

take_bench_lock

# Descriptors: the server and wrk each need one per connection, plus a few.
raise_fd_limit connections "${connections_arr[@]}"

mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/http_bench.XXXXXX")
server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
cleanup() {
  stop_server
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wrk's latency with its unit ("812.00us", "1.20ms", "2.00s") in ms.
to_ms() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) printf "%.3f", substr(v, 1, length(v) - 2) / 1000
    else if (v ~ /ms$/) printf "%.3f", substr(v, 1, length(v) - 2)
    else if (v ~ /s$/) printf "%.3f", substr(v, 1, length(v) - 1) * 1000
    else exit 1 }'
}

# run_one PROGRAM THREADS CONNECTIONS ENV: sets $rps and $p99 (ms), or
# returns 1 with the reason in $tmp/why.
run_one() {
  local prog=$1 threads=$2 connections=$3 port= i rc envs=() wt
  [ "$4" = - ] || IFS=, read -r -a envs <<<"$4"
  rps= p99=
  : >"$tmp/why"
  rm -f "$tmp/server.out"
  timeout -k 2 $((seconds + 60)) env "${envs[@]}" "$bin/$prog" 0 "$threads" \
    >"$tmp/server.out" 2>"$tmp/server.err" &
  server_pid=$!
  for ((i = 0; i < 200; i++)); do
    port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.out" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    echo "$prog did not report a port: $(head -c 300 "$tmp/server.err")" >"$tmp/why"
    stop_server
    return 1
  fi
  wt=$((wrk_threads < connections ? wrk_threads : connections))
  rc=0
  timeout -k 2 $((seconds + 30)) wrk -t "$wt" -c "$connections" -d "${seconds}s" --latency \
    "http://127.0.0.1:$port/" >"$tmp/wrk.out" 2>&1 || rc=$?
  stop_server
  if [ $rc -ne 0 ]; then
    echo "wrk exit $rc: $(tail -n 2 "$tmp/wrk.out" | tr '\n' ' ' | head -c 300)" >"$tmp/why"
    return 1
  fi
  # Errors (non-2xx answers, socket errors) make the run worthless.
  if grep -Eq 'Non-2xx|Socket errors' "$tmp/wrk.out"; then
    echo "wrk saw errors: $(grep -E 'Non-2xx|Socket errors' "$tmp/wrk.out" | tr '\n' ' ')" >"$tmp/why"
    return 1
  fi
  rps=$(awk '$1 == "Requests/sec:" {print $2}' "$tmp/wrk.out")
  p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.out")
  [ -n "$p99" ] && p99=$(to_ms "$p99")
  if [ -z "$rps" ] || [ -z "$p99" ]; then
    echo "no Requests/sec or 99% line in wrk's output" >"$tmp/why"
    return 1
  fi
}

points=$(( ${#threads_arr[@]} * ${#connections_arr[@]} ))
total_runs=$(( points * repeat * ${#servers[@]} ))
echo "http: $points points x ${#servers[@]} servers x $repeat repeats = $total_runs runs of ${seconds}s" \
     "(about $(hms $((total_runs * (seconds + 1)))))" >&2

runs_csv=$out/http_runs.csv
join_csv threads connections server env repeat requests_per_s p99_ms status >"$runs_csv"
csv=$out/http.csv
join_csv threads connections server median_requests_per_s median_p99_ms ok_runs failed_runs >"$csv"
done_runs=0
for threads in "${threads_arr[@]}"; do
  for connections in "${connections_arr[@]}"; do
    for s in "${servers[@]}"; do
      read -r label _ _ <<<"$s"
      : >"$tmp/rps.$label"
      : >"$tmp/p99.$label"
    done
    for ((r = 1; r <= repeat; r++)); do
      for s in "${servers[@]}"; do
        read -r label prog envs <<<"$s"
        if run_one "$prog" "$threads" "$connections" "$envs"; then
          echo "$rps" >>"$tmp/rps.$label"
          echo "$p99" >>"$tmp/p99.$label"
          status=ok shown="$rps req/s, p99 $p99 ms"
        else
          status=failed shown="FAILED: $(cat "$tmp/why")"
        fi
        echo "$threads,$connections,$label,${envs//,/ },$r,$rps,$p99,$status" >>"$runs_csv"
        done_runs=$((done_runs + 1))
        printf '[%d/%d] threads=%s connections=%s %-10s repeat %d: %s\n' \
          $done_runs $total_runs "$threads" "$connections" "$label" $r "$shown" >&2
      done
    done
    for s in "${servers[@]}"; do
      read -r label _ _ <<<"$s"
      ok=$(wc -l <"$tmp/rps.$label")
      med=$(median_fmt %.0f <"$tmp/rps.$label")
      p=$(median_fmt %.3f <"$tmp/p99.$label")
      join_csv "$threads" "$connections" "$label" "${med:-NA}" "${p:-NA}" "$ok" $((repeat - ok)) >>"$csv"
    done
  done
done

awk -F, -v repeat="$repeat" -v seconds="$seconds" -v wt="$wrk_threads" "$csv_header"'
  { key = $col["threads"] " " $col["connections"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    rps[key, $col["server"]] = $col["median_requests_per_s"]
    p99[key, $col["server"]] = $col["median_p99_ms"]
    failed[key, $col["server"]] = $col["failed_runs"] }
  function cell(k, s) {
    if (rps[k, s] == "NA") return "FAILED"
    return rps[k, s] (failed[k, s] > 0 ? " (" failed[k, s] " failed)" : "")
  }
  function lat(k, s) { return p99[k, s] == "NA" ? "-" : p99[k, s] }
  function ratio(a, b) { return (a != "NA" && b != "NA" && b > 0) ? sprintf("%.2f", a / b) : "-" }
  END {
    printf "wrk -t %d --latency against each server, keep-alive, GET / (13-byte body); median of %d run(s) of %s s. Requests/s, and p99 latency in ms.\n\n", wt, repeat, seconds
    print "| threads | connections | muon req/s | muon io_uring req/s | beast req/s | muon/beast | muon io_uring/beast | muon p99 ms | muon io_uring p99 ms | beast p99 ms | floor req/s | muon/floor | beast/floor |"
    print "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, f, " ")
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f[1], f[2],
             cell(k, "muon"), cell(k, "muon-uring"), cell(k, "beast"),
             ratio(rps[k, "muon"], rps[k, "beast"]), ratio(rps[k, "muon-uring"], rps[k, "beast"]),
             lat(k, "muon"), lat(k, "muon-uring"), lat(k, "beast"),
             cell(k, "floor"), ratio(rps[k, "muon"], rps[k, "floor"]), ratio(rps[k, "beast"], rps[k, "floor"])
    }
  }' "$csv"
echo "http: wrote $csv and $runs_csv" >&2
