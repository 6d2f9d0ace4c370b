#!/usr/bin/env bash
# The latency of one log call: log_latency run several times, the median of
# each percentile across the runs. What it runs and writes: help_text below
# (latency_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=latency_bench

synopsis() {
  cat <<'EOF'
latency_bench.sh BUILD_DIR [--quick] [--repeat R] [--timeout S]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

Runs BUILD_DIR/bin/log_latency R times (default 5) one after the other,
each under timeout(1) (S seconds, default 900): {muon-async, muon-sync,
spdlog-async, spdlog-sync} x messages {short, int-int-double} x {1, 2}
threads, plus the empty pair (two counter reads with nothing between) and
the counter read (one more read between them: the floor of a call).
Each thread runs 100,000 measured bursts of 20 calls after 10,000 warm-up
bursts, each call timed alone, ~10 us of sleep between bursts: a run takes
about 1 min 45 s on a 2-CPU VM, 5 runs about 9 minutes. --quick:
log_latency --quick (10,000 bursts after 1,000) and R = 1 unless --repeat
is given.

Prints the markdown table of medians: for each cell (logger, message,
threads) the median across the runs of each percentile (p50 ... max, in ns,
as the calling thread sees one call), and beside them the instructions one
call runs on the calling thread (1 thread): log_latency --count-only under
valgrind's callgrind, 550 bursts of 20 calls, the last 500 counted
(--toggle-collect='*countedCall*'), total / 10,000; "-" without valgrind
(build.sh bench installs it). A run that failed or lost lines is
left out of the medians and named under the table. Files, in BUILD_DIR/bench/:
  log_latency_run1.csv, ...  each run's rows (log_latency --csv)
  log_latency.csv            the medians: the same columns and `runs`, the
                             number of runs behind each cell
  log_latency_runs.txt       everything each run printed, and its stderr
  log_latency_instructions.csv  logger,message,instructions (1 thread)
Log files are written under BUILD_DIR/bench and removed after each case.
On a shared machine run the whole script under one lock, e.g.
  flock /tmp/muon-bench.lock examples/bench/latency_bench.sh build
(it takes no lock itself: a nested flock on the same file would deadlock).
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
bin=$build/bin/log_latency
out=$build/bench

repeat=5 timeout_s=900 quick=() repeat_set=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --repeat) need_value $#; repeat=$2; repeat_set=1; shift ;;
    --timeout) need_value $#; timeout_s=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
if [ ${#quick[@]} -gt 0 ] && [ $repeat_set -eq 0 ]; then repeat=1; fi
want_count --repeat "$repeat" 100
want_count --timeout "$timeout_s"
[ -x "$bin" ] || die "$bin is not built (cmake --build $build --target log_latency; it needs libspdlog-dev)"

mkdir -p "$out"
# The log files go next to the results, on the build's disk: /tmp may be a
# tmpfs, which would measure memory, not a file system.
logdir=$(mktemp -d "$out/logfiles.XXXXXX")
trap 'rm -rf "$logdir"' EXIT
trap 'exit 130' INT TERM

runs_txt=$out/log_latency_runs.txt
csv=$out/log_latency.csv
rm -f "$out"/log_latency_run[0-9]*.csv
: >"$runs_txt"

started=$SECONDS
ok_csvs=() failed=()
for ((r = 1; r <= repeat; r++)); do
  run_csv=$out/log_latency_run$r.csv
  printf '[%d/%d] log_latency %s... ' "$r" "$repeat" "${quick[*]:+${quick[*]} }" >&2
  t0=$SECONDS rc=0
  timeout -k 10 "$timeout_s" "$bin" "${quick[@]}" --dir "$logdir" --csv "$run_csv" \
    >"$logdir/run.out" 2>"$logdir/run.err" || rc=$?
  {
    echo "== run $r (exit $rc)"
    cat "$logdir/run.out"
    sed 's/^/stderr: /' "$logdir/run.err"
  } >>"$runs_txt"
  if [ $rc -eq 0 ] && [ -s "$run_csv" ]; then
    ok_csvs+=("$run_csv")
    hms $((SECONDS - t0)) >&2; echo >&2
  else
    case $rc in
      124|137) why="timed out after ${timeout_s}s" ;;
      1) why="exit 1"
         if grep -q ' lines lost ' "$logdir/run.out"; then why="lines lost"; fi ;;
      *) why="exit $rc" ;;
    esac
    failed+=("run $r: $why")
    echo "FAILED ($why)" >&2
    tail -n 3 "$logdir/run.err" | sed 's/^/    /' >&2
  fi
done
echo "$bench_name: $repeat run(s) in $(hms $((SECONDS - started))), ${#failed[@]} failed" >&2

# ---- The medians ----------------------------------------------------------
latency_medians "${ok_csvs[@]}" >"$csv"

# ---- Instructions per call --------------------------------------------------
# Counts, not timings: callgrind's figure repeats on a busy machine. One
# valgrind run per logger and message, one thread.
instructions_csv=$out/log_latency_instructions.csv
echo "logger,message,instructions" >"$instructions_csv"
count_bursts=500 count_warmup=50
if command -v valgrind >/dev/null; then
  for logger in muon-async muon-sync spdlog-async spdlog-sync; do
    for message in short int-int-double; do
      rc=0
      timeout -k 10 "$timeout_s" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "--toggle-collect=*countedCall*" "$bin" --count-only --only "$logger" --threads 1 \
        --message "$message" --bursts $count_bursts --warmup $count_warmup --dir "$logdir" \
        >"$logdir/count.out" 2>"$logdir/count.err" || rc=$?
      collected=$(awk '/Collected :/ { print $NF }' "$logdir/count.err")
      calls=$(awk '/--count-only:/ { print $4 }' "$logdir/count.out")
      if [ $rc -ne 0 ] || [ -z "$collected" ] || [ -z "$calls" ] || [ "$calls" -eq 0 ]; then
        echo "$bench_name: counting $logger $message failed (exit $rc)" >&2
        tail -n 3 "$logdir/count.err" | sed 's/^/    /' >&2
        continue
      fi
      awk -v l="$logger" -v m="$message" -v c="$collected" -v n="$calls" \
        'BEGIN { printf "%s,%s,%.1f\n", l, m, c / n }' >>"$instructions_csv"
    done
  done
else
  echo "$bench_name: valgrind not found: no instructions per call" >&2
fi

# ---- The table ------------------------------------------------------------
method=$(grep -m 1 '^# log_latency:' "$runs_txt" || true)
echo "log_latency, median of ${#ok_csvs[@]} run(s) per cell (each percentile's median across the runs):"
echo "ns per call as the calling thread sees it, each call timed alone between two fenced counter"
echo "reads; nothing subtracted (the empty-pair row is the two reads alone)."
[ -z "$method" ] || echo "${method#\# }"
echo
echo "Instructions: per call on the calling thread, 1 thread (callgrind; log_latency --count-only)."
echo
echo "| logger | message | threads | p50 | p90 | p99 | p99.9 | p99.99 | max | instructions |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
awk -F, '
  FILENAME == ARGV[1] { if (FNR > 1) ins[$1 SUBSEP $2] = $3; next }
  FNR == 1 { delete col; for (i = 1; i <= NF; i++) col[$i] = i; next }
  { k = $col["logger"] SUBSEP $col["message"]
    n = ($col["threads"] == 1 && (k in ins)) ? ins[k] : "-"
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $col["logger"], $col["message"], $col["threads"],
      $col["p50"], $col["p90"], $col["p99"], $col["p99_9"], $col["p99_99"], $col["max"], n }' "$instructions_csv" "$csv"
if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "Left out of the medians (details in $runs_txt):"
  for f in "${failed[@]}"; do echo "- $f"; done
  grep -h ' lines lost ' "$runs_txt" | sed 's/^/  /' || true
fi
echo "$bench_name: wrote $csv, log_latency_run*.csv and $runs_txt" >&2
[ ${#failed[@]} -eq 0 ]
