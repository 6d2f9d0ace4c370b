#!/usr/bin/env bash
# The burst harness's latency for muon-async beside Quill and fmtlog, whose
# sources are not in this repository: `build` compiles their programs
# against checkouts the user names, `run` alternates the three. What it runs
# and prints: help_text below (peers_latency.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=peers_latency

synopsis() {
  cat <<'EOF'
peers_latency.sh build QUILL_INCLUDE FMTLOG_DIR FMT_INCLUDE PEERS_DIR
peers_latency.sh run BUILD_DIR PEERS_DIR [--rounds R] [--quick] [--threads 1|2|1,2]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

build: compiles examples/logbench/peers/peer_latency.cc twice, g++ -O2,
into PEERS_DIR/quill_latency (Quill's include/, header-only; measured
with v12.1.0) and PEERS_DIR/fmtlog_latency (a fmtlog checkout, header-only,
with {fmt}'s include/ of the version it builds with: 11.1.3; built with
FMTLOG_BLOCK=1, so that a full queue waits rather than drops: every
program here must keep every line). Nothing is downloaded.

run: R rounds (default 3), each running BUILD_DIR/bin/log_latency --only
muon-async, then the two peers' programs, in an order that rotates from
round to round, one process per message and thread count; all three run
log_latency's burst harness
(examples/logbench/BurstHarness.h: bursts of 20 calls ~10 us apart, each
call timed alone between fenced counter reads) on the two messages at 1
and 2 threads, writing real files, which are read back and counted.
--quick: 10,000 measured bursts after 1,000 per thread (default 100,000
after 10,000). Prints the markdown table of each cell's median across the
rounds (each percentile on its own, ns) and writes, in BUILD_DIR/bench/:
  peers_latency.csv         the medians (log_latency.csv's columns)
  peers_latency_runs.txt    what every program printed
A peer's program killed by a signal is run again, up to three times
(fmtlog's backend crashes now and then with two threads), and the retries
are listed under the table; a cell killed in all three attempts is left
out of that round (its median is of the rounds that finished it) and listed
too. muon's program is never run again. A program that fails otherwise, or
loses lines, fails the script. Takes no lock
itself: on a shared machine run it under one, e.g.
  flock /tmp/muon-bench.lock examples/bench/peers_latency.sh run build PEERS_DIR
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

case "${1:-}" in
  -h|--help) help_text; exit 0 ;;
  build)
    [ $# -eq 5 ] || usage
    quill=$2 fmtlog=$3 fmt=$4 peers=$5
    [ -d "$quill/quill" ] || die "no $quill/quill (Quill's include/)"
    [ -f "$fmtlog/fmtlog.h" ] || die "no $fmtlog/fmtlog.h"
    [ -d "$fmt/fmt" ] || die "no $fmt/fmt ({fmt}'s include/)"
    mkdir -p "$peers"
    src=$here/../logbench/peers/peer_latency.cc
    inc=(-I"$here/../logbench" -I"$here/../common")
    g++ -std=c++17 -O2 -DPEER_QUILL "${inc[@]}" -I"$quill" "$src" -o "$peers/quill_latency" -lpthread
    # FMTLOG_BLOCK: a full queue waits instead of dropping the line, as
    # log_latency's loggers keep every line (a case that loses one fails).
    g++ -std=c++17 -O2 -DPEER_FMTLOG -DFMTLOG_BLOCK=1 -DFMT_HEADER_ONLY "${inc[@]}" -I"$fmt" -I"$fmtlog" "$src" \
      -o "$peers/fmtlog_latency" -lpthread
    echo "$bench_name: built $peers/quill_latency and $peers/fmtlog_latency" >&2
    exit 0
    ;;
  run) shift ;;
  *) usage ;;
esac

take_build_dir "${1:-}"
shift
[ $# -ge 1 ] || usage
peers=$(cd "$1" && pwd) || die "no directory '$1'"
shift
rounds=3 quick=() threads=1,2
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) need_value $#; rounds=$2; shift ;;
    --quick) quick=(--bursts 10000 --warmup 1000) ;;
    --threads) need_value $#; threads=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
want_count --rounds "$rounds" 100
for prog in "$build/bin/log_latency" "$peers/quill_latency" "$peers/fmtlog_latency"; do
  [ -x "$prog" ] || die "$prog is not built"
done

out=$build/bench
mkdir -p "$out"
# Log files on the build's disk, as latency_bench.sh has them.
work=$(mktemp -d "$out/peers_latency.XXXXXX")
trap 'rm -rf "$work"' EXIT
runs_txt=$out/peers_latency_runs.txt
: >"$runs_txt"

# One process per program and cell (message, threads): fmtlog's backend
# crashed in a second case within one process (a thread buffer of the
# first case's exited threads), and each program then starts alike.
programs=(muon quill fmtlog)
IFS=, read -r -a thread_list <<<"$threads"
csvs=() crashes=() unfinished=()
for ((r = 1; r <= rounds; r++)); do
  for ((k = 0; k < 3; k++)); do
    who=${programs[(r - 1 + k) % 3]}
    case $who in
      muon) cmd=("$build/bin/log_latency" --only muon-async) ;;
      *) cmd=("$peers/${who}_latency") ;;
    esac
    echo "[$r/$rounds] $who" >&2
    for message in short int-int-double; do
      for t in "${thread_list[@]}"; do
        csv=$work/$who-$r-$message-$t.csv
        for attempt in 1 2 3; do
          rc=0
          "${cmd[@]}" "${quick[@]}" --message "$message" --threads "$t" --dir "$work" --csv "$csv" \
            >"$work/out" 2>"$work/err" || rc=$?
          { echo "== round $r: $who, $message, $t thread(s) (exit $rc)"; cat "$work/out"
            sed 's/^/stderr: /' "$work/err"; } >>"$runs_txt"
          # A peer killed by a signal (fmtlog's backend crashes now and then
          # with two threads) is run again; muon never is.
          [ $rc -gt 128 ] && [ "$who" != muon ] && [ $attempt -lt 3 ] || break
          crashes+=("$who, $message, $t thread(s), round $r: signal $((rc - 128))")
        done
        if [ $rc -ne 0 ]; then
          # A peer that crashed in all three attempts leaves its cell out of
          # this round (its row is the median of the rounds it finished);
          # any other failure, and any of muon's, ends the run.
          [ $rc -gt 128 ] && [ "$who" != muon ] || die "$who failed in round $r (exit $rc; see $runs_txt)"
          unfinished+=("$who, $message, $t thread(s), round $r: signal $((rc - 128)) in each of 3 attempts")
          continue
        fi
        csvs+=("$csv")
      done
    done
  done
done

latency_medians "${csvs[@]}" >"$out/peers_latency.csv"
echo "peers_latency: median of $rounds round(s) per cell, ns per call as the calling thread sees it"
echo "(the burst harness; nothing subtracted: the empty-pair row is the two counter reads alone)."
grep -m 1 '^# log_latency:' "$runs_txt" | sed 's/^# //' || true
echo
echo "| logger | message | threads | p50 | p90 | p99 | p99.9 | p99.99 | max |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
awk -F, "$csv_header"'
  $col["logger"] != "counter-read" {
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $col["logger"], $col["message"], $col["threads"],
      $col["p50"], $col["p90"], $col["p99"], $col["p99_9"], $col["p99_99"], $col["max"] }' \
  "$out/peers_latency.csv" | sort -t'|' -k3,3 -k4,4n -s
if [ ${#unfinished[@]} -gt 0 ]; then
  echo
  echo "Cells left out of a round (the peer crashed in every attempt; see $runs_txt):"
  for c in "${unfinished[@]}"; do echo "- $c"; done
fi
if [ ${#crashes[@]} -gt 0 ]; then
  echo
  echo "Run again after a crash (the crashed runs are in $runs_txt):"
  for c in "${crashes[@]}"; do echo "- $c"; done
fi
echo "$bench_name: wrote $out/peers_latency.csv and $runs_txt" >&2
