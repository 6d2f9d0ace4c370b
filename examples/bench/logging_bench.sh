#!/usr/bin/env bash
# The logging matrix: muon's AsyncLogging against spdlog and glog.
# What it runs and writes: help_text below (logging_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=logging_bench

synopsis() {
  cat <<'EOF'
logging_bench.sh BUILD_DIR [--quick] [--repeat R] [--messages N] [--timeout S]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

Runs BUILD_DIR/bin/logbench once per point, one process at a time, each
under timeout(1) (S seconds, default 300) so a stuck point is reported as
failed instead of hanging the matrix. Points: {muon (policy block),
muon-crash (crash-safe mode, policy block), spdlog-async, spdlog-sync,
glog} x {short, long} x {1, 2, 4 threads}, plus muon with policy drop for
long messages, plus muon's file stages (muon-zstd: --compress zstd;
muon-zstd-aes: and --key-file, a fresh random key), short, 1 thread;
each point is R runs in one process (default 5) and reports their median.
Then two latency points: muon and muon-crash, short, 1 thread, --latency.

Messages per run: N for short lines (default 1,000,000), N/5 for long ones
(~3 KB each, so a long run writes ~5x the bytes of a short one; at N the
matrix would take well over 10 minutes). --quick: R=1, 1 and 2 threads,
N=300,000: well under a minute.

Progress goes to stderr; the markdown table to stdout. Files, in BUILD_DIR/bench/:
  logbench.csv       one row per point: the medians, peak RSS, latency
  logbench.png       msg/s against threads, one line per logger, short and
                     long side by side (when gnuplot is installed)
  logbench_runs.txt  logbench's own output for every point, every run
Log files are written under BUILD_DIR/bench and removed after each run.
On a shared machine run the whole script under one lock, e.g.
  flock /tmp/muon-bench.lock examples/bench/logging_bench.sh build
(it takes no lock itself: a nested flock on the same file would deadlock).
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
bin=$build/bin/logbench
out=$build/bench

repeat=5 messages=1000000 timeout_s=300
quick=0 repeat_set=0 messages_set=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --repeat) need_value $#; repeat=$2; repeat_set=1; shift ;;
    --messages) need_value $#; messages=$2; messages_set=1; shift ;;
    --timeout) need_value $#; timeout_s=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
threads_list=(1 2 4)
if [ $quick -eq 1 ]; then
  [ $repeat_set -eq 1 ] || repeat=1
  [ $messages_set -eq 1 ] || messages=300000
  threads_list=(1 2)
fi
want_count --repeat "$repeat" 100
want_count --messages "$messages"
want_count --timeout "$timeout_s"
[ -x "$bin" ] || die "$bin is not built (cmake --build $build --target logbench; it needs libspdlog-dev and libgoogle-glog-dev)"
short_n=$messages
long_n=$((messages / 5))
[ $long_n -ge 1 ] || long_n=1

mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/logging_bench.XXXXXX")
# The log files go next to the results, on the build's disk: /tmp may be a
# tmpfs, which would measure memory, not a file system.
logdir=$(mktemp -d "$out/logfiles.XXXXXX")
cleanup() { rm -rf "$tmp" "$logdir"; }
keyfile=$tmp/aes.key
(umask 077 && head -c 32 /dev/urandom >"$keyfile")
trap cleanup EXIT
trap 'exit 130' INT TERM

# A long run writes ~3.1 KB per message; warn rather than fail half way.
need_kib=$((long_n * 32 / 10 + 1024))
avail_kib=$(df -Pk "$logdir" | awk 'NR == 2 {print $4}')
if [ -n "$avail_kib" ] && [ "$avail_kib" -lt "$need_kib" ]; then
  echo "logging_bench: warning: $((avail_kib / 1024)) MiB free in $out, a long run needs ~$((need_kib / 1024)) MiB" >&2
fi

# Points, as "logger policy size threads messages"; the loggers of one
# size/threads cell run back to back, so a change in machine load tends to
# hit the numbers compared in one row group alike.
points=()
for size in short long; do
  n=$short_n
  if [ $size = long ]; then n=$long_n; fi
  for t in "${threads_list[@]}"; do
    points+=("muon block $size $t $n" "muon-crash block $size $t $n")
    if [ $size = long ]; then points+=("muon drop $size $t $n"); fi
    points+=("spdlog-async - $size $t $n" "spdlog-sync - $size $t $n" "glog - $size $t $n")
  done
done
points+=("muon-zstd block short 1 $short_n" "muon-zstd-aes block short 1 $short_n")
total=$((${#points[@]} + 2))

csv=$out/logbench.csv
runs_txt=$out/logbench_runs.txt
# The CSV's columns: logger, policy, size, threads, messages, repeats, mode
# (throughput or latency), status (ok or why not), seconds, bytes, msg/s,
# MiB/s, written, dropped, lines, lost lines, peak RSS KiB, the latency clock,
# its overhead in ns, p50 p99 p99.9 p99.99 max in ns, system CPU seconds per
# GiB logged, spool bytes on disk (muon-crash).
columns=(logger policy size threads messages repeats mode status seconds bytes msg_per_s mib_per_s
         written dropped lines lost_lines peak_rss_kib latency_clock timer_overhead_ns
         p50_ns p99_ns p999_ns p9999_ns max_ns system_cpu_s_per_gib spool_disk_bytes)
columns_csv=$(join_csv "${columns[@]}")
echo "$columns_csv" >"$csv"
: >"$runs_txt"

started=$SECONDS
failures=0

# run_point INDEX LOGGER POLICY SIZE THREADS MESSAGES [--latency]
# Runs one point and appends its CSV row.
run_point() {
  local i=$1 logger=$2 policy=$3 size=$4 threads=$5 n=$6 extra=${7:-}
  local peer=$logger
  case "$logger" in muon-*) peer=muon ;; esac  # muon's variants are flags of logbench's muon
  local args=(--logger "$peer" --size "$size" --threads "$threads" --messages "$n"
              --repeat "$repeat" --dir "$logdir")
  case "$logger" in
    muon-crash) args+=(--crash-safe) ;;
    muon-zstd) args+=(--compress zstd) ;;
    muon-zstd-aes) args+=(--compress zstd --key-file "$keyfile") ;;
  esac
  local label="$logger"
  if [ "$policy" != - ]; then
    args+=(--policy "$policy")
    label="$logger ($policy)"
  fi
  local mode=throughput
  if [ -n "$extra" ]; then
    args+=("$extra")
    mode=latency
  fi
  printf '[%2d/%d] %-14s %-5s %d thread(s), %s messages x %d%s ... ' "$i" "$total" "$label" \
    "$size" "$threads" "$n" "$repeat" "${extra:+ $extra}" >&2
  local t0=$SECONDS rc=0
  timeout -k 10 "$timeout_s" "$bin" "${args[@]}" >"$tmp/point.out" 2>"$tmp/point.err" || rc=$?
  {
    echo "== $label $size threads $threads messages $n repeat $repeat ${extra} (exit $rc)"
    cat "$tmp/point.out"
    sed 's/^/stderr: /' "$tmp/point.err"
  } >>"$runs_txt"

  local status=ok
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    status="timeout after ${timeout_s}s"
  elif [ $rc -ne 0 ]; then
    status="exit $rc"
  elif ! grep -q '^peak_rss_kib ' "$tmp/point.out"; then
    status="no result"
  fi
  if [ "$status" != ok ]; then
    failures=$((failures + 1))
    echo "FAILED ($status)" >&2
    tail -n 5 "$tmp/point.err" | sed 's/^/    /' >&2
    awk -v columns="$columns_csv" -v logger="$logger" -v policy="$policy" -v size="$size" \
        -v threads="$threads" -v n="$n" -v repeat="$repeat" -v mode="$mode" -v status="$status" \
        "$csv_emit"'
      BEGIN {
        v["logger"] = logger; v["policy"] = policy; v["size"] = size; v["threads"] = threads
        v["messages"] = n; v["repeats"] = repeat; v["mode"] = mode; v["status"] = status
        emit(v)
      }' >>"$csv"
    return 0
  fi
  # The last summary line is the median (or the only run); likewise for
  # the written/latency lines that follow it.
  awk -v columns="$columns_csv" -v logger="$logger" -v policy="$policy" -v size="$size" \
      -v threads="$threads" -v n="$n" -v repeat="$repeat" -v mode="$mode" "$csv_emit"'
    / seconds, .* bytes, .* msg\/s, .* MiB\/s$/ {
      v["seconds"] = $2; v["bytes"] = $4; v["msg_per_s"] = $6; v["mib_per_s"] = $8
    }
    $1 == "written" { v["written"] = $2; v["dropped"] = $4; v["lines"] = $6 }
    $1 == "latency_ns" { v["p50_ns"] = $3; v["p99_ns"] = $5; v["p999_ns"] = $7; v["p9999_ns"] = $9; v["max_ns"] = $11 }
    $1 == "#" && $2 == "latency" && $3 == "clock" {
      clock = $4; sub(/,$/, "", clock); v["latency_clock"] = clock; v["timer_overhead_ns"] = $5
    }
    $1 == "peak_rss_kib" { v["peak_rss_kib"] = $2 }
    $1 == "system_cpu_seconds" { v["system_cpu_s_per_gib"] = $4 }
    $1 == "spool_disk_bytes" { v["spool_disk_bytes"] = $2 }
    END {
      v["logger"] = logger; v["policy"] = policy; v["size"] = size; v["threads"] = threads
      v["messages"] = n; v["repeats"] = repeat; v["mode"] = mode; v["status"] = "ok"
      v["lost_lines"] = sprintf("%.0f", n - v["lines"])
      emit(v)
    }' "$tmp/point.out" >>"$csv"
  echo "$(awk -F, "$csv_header"'{ mps = $col["msg_per_s"] } END { printf "%.0f msg/s", mps }' "$csv"), $(hms $((SECONDS - t0)))" >&2
}

i=0
for p in "${points[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086  # p is five words by construction
  run_point $i $p
done
run_point $((total - 1)) muon block short 1 "$short_n" --latency
run_point $total muon-crash block short 1 "$short_n" --latency

echo "logging_bench: $total points in $(hms $((SECONDS - started))), $failures failed" >&2

# ---- The table ------------------------------------------------------------
# Every awk program below reads logbench.csv by column name (csv_header).
echo "logbench, median of $repeat run(s) per point. msg/s: messages given / seconds from the first"
echo "call until the logger has written and flushed every line (to the page cache; no fsync)."
echo "Lost lines: messages - lines found in the files; only muon (drop) may lose lines, and"
echo "those it must report as dropped."
echo
echo "| logger | size | threads | messages | msg/s | MiB/s | lost lines | vs spdlog-async |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
awk -F, "$csv_header"'
  $col["mode"] != "throughput" { next }
  {
    row[++rows] = $0
    if ($col["logger"] == "spdlog-async" && $col["status"] == "ok")
      base[$col["size"] "," $col["threads"]] = $col["msg_per_s"]
  }
  END {
    for (r = 1; r <= rows; r++) {
      $0 = row[r]
      label = $col["logger"]
      if ($col["policy"] != "-") label = label " (" $col["policy"] ")"
      if ($col["status"] != "ok") {
        printf "| %s | %s | %s | %s | failed: %s | | | |\n", label, $col["size"], $col["threads"],
          $col["messages"], $col["status"]
        continue
      }
      key = $col["size"] "," $col["threads"]
      ratio = (key in base && base[key] > 0) ? sprintf("%.2fx", $col["msg_per_s"] / base[key]) : "n/a"
      lost = $col["lost_lines"]
      if (lost + 0 != $col["dropped"] + 0) lost = lost " (reported dropped: " $col["dropped"] ")"
      printf "| %s | %s | %s | %s | %.0f | %.1f | %s | %s |\n", label, $col["size"], $col["threads"],
        $col["messages"], $col["msg_per_s"], $col["mib_per_s"], lost, ratio
    }
  }' "$csv"
echo
awk -F, "$csv_header"'
  $col["mode"] == "latency" {
    if ($col["status"] != "ok") {
      printf "Latency point (%s, short, 1 thread): failed: %s.\n", $col["logger"], $col["status"]
      next
    }
    printf "Latency of one LOG_INFO call, %s (%s), short, %s thread, %s messages, median of %s run(s): ", \
      $col["logger"], $col["policy"], $col["threads"], $col["messages"], $col["repeats"]
    printf "p50 %s ns, p99 %s ns, p99.9 %s ns, p99.99 %s ns, max %s ns ", $col["p50_ns"], $col["p99_ns"],
      $col["p999_ns"], $col["p9999_ns"], $col["max_ns"]
    printf "(clock %s; every sample includes ~%s ns of clock reads).\n", $col["latency_clock"],
      $col["timer_overhead_ns"]
  }
  $col["mode"] == "throughput" && $col["status"] == "ok" && $col["logger"] == "muon" &&
  $col["policy"] == "block" && $col["size"] == "short" && $col["threads"] == 1 {
    printf "Peak RSS of muon (block), short, 1 thread, %s messages: %.1f MiB.\n", $col["messages"],
      $col["peak_rss_kib"] / 1024
  }' "$csv"

# Crash-safe against the default mode, point by point (both policy block).
awk -F, "$csv_header"'
  $col["mode"] == "throughput" && $col["status"] == "ok" && $col["policy"] == "block" &&
  ($col["logger"] == "muon" || $col["logger"] == "muon-crash") {
    key = $col["size"] "," $col["threads"]
    l = $col["logger"]
    mps[l, key] = $col["msg_per_s"]; rss[l, key] = $col["peak_rss_kib"]
    sys[l, key] = $col["system_cpu_s_per_gib"]; spool[key] = $col["spool_disk_bytes"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
  }
  END {
    if (n == 0) exit
    print ""
    print "Crash-safe mode (muon-crash) against the default mode (muon), both policy block:"
    print ""
    print "| size | threads | msg/s ratio | peak RSS MiB (default / crash-safe) | system CPU s per GiB (default / crash-safe) | spool on disk MiB |"
    print "|---|---:|---:|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
      k = order[i]
      if (!(("muon", k) in mps) || !(("muon-crash", k) in mps) || mps["muon", k] == 0) continue
      split(k, f, ",")
      printf "| %s | %s | %.2fx | %.1f / %.1f | %.2f / %.2f | %.1f |\n", f[1], f[2], \
        mps["muon-crash", k] / mps["muon", k], rss["muon", k] / 1024, rss["muon-crash", k] / 1024, \
        sys["muon", k], sys["muon-crash", k], spool[k] / 1048576
    }
  }' "$csv"

# The file stages against plain files (muon, block, short, 1 thread).
awk -F, "$csv_header"'
  $col["mode"] == "throughput" && $col["status"] == "ok" && $col["size"] == "short" &&
  $col["threads"] == 1 && $col["policy"] == "block" &&
  ($col["logger"] == "muon" || $col["logger"] == "muon-zstd" || $col["logger"] == "muon-zstd-aes") {
    mps[$col["logger"]] = $col["msg_per_s"]; bytes[$col["logger"]] = $col["bytes"]
  }
  END {
    if (!("muon" in mps) || !("muon-zstd" in mps)) exit
    print ""
    print "File stages (muon, block, short lines, 1 thread): msg/s and bytes on disk:"
    print ""
    print "| files | msg/s | vs plain | bytes on disk | ratio |"
    print "|---|---:|---:|---:|---:|"
    split("muon muon-zstd muon-zstd-aes", names, " ")
    for (i = 1; i <= 3; i++) {
      k = names[i]
      if (!(k in mps)) continue
      printf "| %s | %.0f | %.2fx | %d | %.1fx |\n", k == "muon" ? "plain" : k == "muon-zstd" ? "zstd" : "zstd + AES-256-GCM", \
        mps[k], mps[k] / mps["muon"], bytes[k], bytes["muon"] / bytes[k]
    }
  }' "$csv"

# ---- The plot -------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
  terminal=png
  if echo 'set terminal pngcairo' | gnuplot >/dev/null 2>&1; then terminal=pngcairo; fi
  # One data file per size and logger: gnuplot draws one line per file.
  awk -F, -v dir="$tmp" "$csv_header"'
    $col["mode"] == "throughput" && $col["status"] == "ok" {
      name = $col["logger"]
      if ($col["policy"] != "-") name = name "-" $col["policy"]
      print $col["threads"], $col["msg_per_s"] > (dir "/plot." $col["size"] "." name ".dat")
    }' "$csv"
  # plot_command SIZE MESSAGES: the title and plot line of one panel. Each
  # logger keeps its colour in both panels.
  plot_command() {
    printf 'set title "%s lines, %s messages per run"\n' "$1" "$2"
    plot_lines "$tmp/plot.$1" muon-block:#009e73 muon-crash-block:#cc79a7 muon-drop:#56b4e9 \
      spdlog-async:#e69f00 spdlog-sync:#d55e00 glog:#7f7f7f
  }
  xtics=$(printf '%s,' "${threads_list[@]}")
  xtics=${xtics%,}
  if gnuplot >"$tmp/gnuplot.err" 2>&1 <<EOF
set terminal $terminal size 1400,560
set output "$out/logbench.png"
set multiplot layout 1,2 title "logbench: messages per second, median of $repeat (higher is better)"
set logscale y
set xlabel "producer threads"
set ylabel "msg/s"
set xtics ($xtics)
set xrange [0.5:${threads_list[-1]}.5]
set grid
set key outside below horizontal
set format y "%.0s%c"
$(plot_command short "$short_n")
$(plot_command long "$long_n")
unset multiplot
EOF
  then
    echo "logging_bench: wrote $out/logbench.png" >&2
  else
    echo "logging_bench: gnuplot failed, no plot:" >&2
    sed 's/^/    /' "$tmp/gnuplot.err" >&2
  fi
else
  echo "logging_bench: gnuplot is not installed (apt-get install gnuplot-nox): no plot" >&2
fi
echo "logging_bench: wrote $csv and $runs_txt" >&2
[ $failures -eq 0 ]
