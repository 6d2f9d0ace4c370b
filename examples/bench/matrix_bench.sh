#!/usr/bin/env bash
# zlog's table: log_matrix (Google Benchmark) as markdown, JSON and a plot.
# What it runs and writes: help_text below (matrix_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=matrix_bench

synopsis() {
  cat <<'EOF'
matrix_bench.sh BUILD_DIR [--quick] [--timeout S]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

Runs BUILD_DIR/bin/log_matrix once, under timeout(1) (S seconds, default
1800): {muon-async, muon-sync, spdlog-async, spdlog-sync, glog, floor} x
messages of {8, 512, 4096} bytes x {1, 2, 4, 8, 16} threads, real files read
back after each benchmark. floor is no logger: only the copy into a 64 KiB
buffer and the write(2) every logger must do, the least a cell can cost.
--quick: 1, 2 and 16 threads, 0.2 s per benchmark.

Prints one markdown table per message size: nanoseconds per call as one
calling thread sees it (log_matrix's ns_per_call), and for muon's two
modes and the floor each cell's speed against the fastest peer in that cell
(spdlog-async, spdlog-sync, glog): 2.00x means half the peer's nanoseconds.
The floor's ratio is about the most a logger can reach in a cell bound by
the copy into the file (larger messages, many threads). A cell whose
benchmark failed (a lost line, say) shows its error.
Files, in BUILD_DIR/bench/:
  log_matrix.json       Google Benchmark's JSON (--benchmark_out)
  log_matrix.csv        logger, bytes, threads, ns_per_call, error
  log_matrix_runs.txt   log_matrix's console output
  log_matrix.png        ns per call against threads, one panel per size
                        (when gnuplot is installed)
On a shared machine run it under the benchmark lock, e.g.
  flock /tmp/muon-bench.lock examples/bench/matrix_bench.sh build
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
bin=$build/bin/log_matrix
out=$build/bench

quick=() timeout_s=1800
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --repeat) need_value $#; shift ;;  # run_bench.sh passes it to every benchmark; one run here
    --timeout) need_value $#; timeout_s=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
want_count --timeout "$timeout_s"
[ -x "$bin" ] || die "$bin is not built (it needs libbenchmark-dev, libspdlog-dev and libgoogle-glog-dev)"

mkdir -p "$out"
json=$out/log_matrix.json
csv=$out/log_matrix.csv
tmp=$(mktemp -d "${TMPDIR:-/tmp}/matrix_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "$bench_name: running log_matrix ${quick[*]} (a few minutes)" >&2
if ! timeout "$timeout_s" "$bin" "${quick[@]}" --dir "$out" --benchmark_out="$json" \
     --benchmark_out_format=json >"$out/log_matrix_runs.txt" 2>&1; then
  echo "$bench_name: log_matrix failed or timed out; the end of its output:" >&2
  tail -n 20 "$out/log_matrix_runs.txt" >&2
  exit 1
fi

# The benchmarks of the JSON as CSV. Google Benchmark writes one "key": value
# per line; each benchmark's object ends with a line holding only "}" or "},".
columns=(logger bytes threads ns_per_call error)
awk -v columns="$(join_csv "${columns[@]}")" "$csv_emit"'
  BEGIN { print columns }
  /^ *"benchmarks": \[/ { inside = 1; next }
  !inside { next }
  /^ *"name": / {
    name = $0; sub(/^ *"name": "/, "", name); sub(/",?$/, "", name)
    split(name, part, "/")
    v["logger"] = part[1]; v["bytes"] = part[2]
    v["threads"] = name; sub(/.*threads:/, "", v["threads"])
    next
  }
  /^ *"ns_per_call": / {
    x = $0; sub(/^ *"ns_per_call": /, "", x); sub(/,$/, "", x)
    v["ns_per_call"] = sprintf("%.0f", x); next
  }
  /^ *"error_message": / {
    x = $0; sub(/^ *"error_message": "/, "", x); sub(/",?$/, "", x); gsub(/,/, ";", x)
    v["error"] = x; next
  }
  /^ *},?$/ { if ("logger" in v) emit(v); delete v }' "$json" >"$csv"

# One table per size: a row per logger, a column per thread count.
awk -F, "$csv_header"'
  {
    k = $col["logger"] SUBSEP $col["bytes"] SUBSEP $col["threads"]
    ns[k] = $col["ns_per_call"]; err[k] = $col["error"]
    if (!($col["bytes"] in seenBytes)) { seenBytes[$col["bytes"]] = 1; sizes[++nSizes] = $col["bytes"] }
    if (!($col["threads"] in seenThreads)) { seenThreads[$col["threads"]] = 1; threads[++nThreads] = $col["threads"] }
  }
  END {
    nLoggers = split("muon-async muon-sync spdlog-async spdlog-sync glog floor", loggers, " ")
    nPeers = split("spdlog-async spdlog-sync glog", peers, " ")
    for (s = 1; s <= nSizes; s++) {
      b = sizes[s]
      printf "\n%d-byte messages: ns per call, per calling thread (lower is better); for muon and the floor, (the fastest peer'"'"'s ns / its own): the floor'"'"'s is about the most any logger can reach where the copy into the file bounds a cell\n\n", b
      header = "| logger |"; rule = "|---|"
      for (t = 1; t <= nThreads; t++) { header = header " " threads[t] " thr |"; rule = rule "---:|" }
      print header; print rule
      for (l = 1; l <= nLoggers; l++) {
        row = "| " loggers[l] " |"
        for (t = 1; t <= nThreads; t++) {
          k = loggers[l] SUBSEP b SUBSEP threads[t]
          if (!(k in ns)) { row = row " |"; continue }
          if (err[k] != "") { row = row " failed: " err[k] " |"; continue }
          cell = ns[k]
          if (loggers[l] ~ /^muon/ || loggers[l] == "floor") {
            best = 0
            for (p = 1; p <= nPeers; p++) {
              q = peers[p] SUBSEP b SUBSEP threads[t]
              if ((q in ns) && err[q] == "" && (best == 0 || ns[q] + 0 < best)) best = ns[q] + 0
            }
            if (best > 0 && ns[k] > 0) cell = sprintf("%s (%.2fx)", ns[k], best / ns[k])
          }
          row = row " " cell " |"
        }
        print row
      }
    }
  }' "$csv"

# ---- The plot -------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
  terminal=png
  if echo 'set terminal pngcairo' | gnuplot >/dev/null 2>&1; then terminal=pngcairo; fi
  # One data file per size and logger: gnuplot draws one line per file.
  awk -F, -v dir="$tmp" "$csv_header"'
    $col["error"] == "" {
      print $col["threads"], $col["ns_per_call"] > (dir "/plot." $col["bytes"] "." $col["logger"] ".dat")
    }' "$csv"
  # plot_command BYTES: the title and plot line of one panel; each logger
  # keeps its colour in every panel.
  plot_command() {
    printf 'set title "%s-byte messages"\n' "$1"
    plot_lines "$tmp/plot.$1" muon-async:#009e73 muon-sync:#56b4e9 spdlog-async:#e69f00 \
      spdlog-sync:#d55e00 glog:#7f7f7f floor:#000000
  }
  if gnuplot >"$tmp/gnuplot.err" 2>&1 <<EOF
set terminal $terminal size 1500,520
set output "$out/log_matrix.png"
set multiplot layout 1,3 title "log_matrix: nanoseconds per call, per calling thread (lower is better)" noenhanced
set logscale xy 2
set xlabel "threads"
set ylabel "ns per call"
set xtics (1, 2, 4, 8, 16)
set xrange [0.8:20]
set grid
set key outside below horizontal noenhanced
$(plot_command 8)
$(plot_command 512)
$(plot_command 4096)
unset multiplot
EOF
  then
    echo "$bench_name: wrote $out/log_matrix.png" >&2
  else
    echo "$bench_name: gnuplot failed, no plot:" >&2
    sed 's/^/    /' "$tmp/gnuplot.err" >&2
  fi
else
  echo "$bench_name: gnuplot is not installed (apt-get install gnuplot-nox): no plot" >&2
fi
