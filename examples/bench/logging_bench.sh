#!/usr/bin/env bash
# The logging matrix: muon's AsyncLogging against spdlog and glog.
#
#   logging_bench.sh BUILD_DIR [--quick] [--repeat R] [--messages N] [--timeout S]
#
# Runs BUILD_DIR/bin/logbench once per point, one process at a time, each
# under timeout(1) (S seconds, default 300) so a stuck point is reported as
# failed instead of hanging the matrix. Points: {muon (policy block),
# muon-crash (crash-safe mode, policy block), spdlog-async, spdlog-sync,
# glog} x {short, long} x {1, 2, 4 threads}, plus muon with policy drop for
# long messages, plus muon's file stages (muon-zstd: --compress zstd;
# muon-zstd-aes: and --key-file, a fresh random key), short, 1 thread;
# each point is R runs in one
# process (default 5) and reports their median. Then two latency points:
# muon and muon-crash, short, 1 thread, --latency.
#
# Messages per run: N for short lines (default 1,000,000), N/5 for long ones
# (~3 KB each, so a long run writes ~5x the bytes of a short one; at N the
# matrix would take well over 10 minutes). --quick: R=1, 1 and 2 threads,
# N=300,000: well under a minute.
#
# Progress goes to stderr; the markdown table to stdout. Files, in BUILD_DIR/bench/:
#   logbench.csv       one row per point: the medians, peak RSS, latency
#   logbench.png       msg/s against threads, one line per logger, short and
#                      long side by side (when gnuplot is installed)
#   logbench_runs.txt  logbench's own output for every point, every run
# Log files are written under BUILD_DIR/bench and removed after each run.
# On a shared machine run the whole script under one lock, e.g.
#   flock /tmp/muon-bench.lock examples/bench/logging_bench.sh build
# (it takes no lock itself: a nested flock on the same file would deadlock).
set -euo pipefail

usage() {
  sed -n '4p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() { echo "logging_bench: $*" >&2; exit 1; }

[ $# -ge 1 ] || usage
build=$1; shift
case "$build" in -*) usage ;; esac
[ -d "$build" ] || die "no build directory '$build'"
bin=$build/bin/logbench
out=$build/bench

repeat=5 messages=1000000 timeout_s=300
quick=0 repeat_set=0 messages_set=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --repeat) [ $# -ge 2 ] || usage; repeat=$2; repeat_set=1; shift ;;
    --messages) [ $# -ge 2 ] || usage; messages=$2; messages_set=1; shift ;;
    --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "logging_bench: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
threads_list=(1 2 4)
if [ $quick -eq 1 ]; then
  [ $repeat_set -eq 1 ] || repeat=1
  [ $messages_set -eq 1 ] || messages=300000
  threads_list=(1 2)
fi
if ! [[ $repeat =~ ^[1-9][0-9]*$ ]] || [ "$repeat" -gt 100 ]; then
  die "--repeat wants 1..100, not '$repeat'"
fi
[[ $messages =~ ^[1-9][0-9]*$ ]] || die "--messages wants a positive integer, not '$messages'"
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout wants whole seconds, not '$timeout_s'"
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
echo "logger,policy,size,threads,messages,repeats,mode,status,seconds,bytes,msg_per_s,mib_per_s,written,dropped,lines,lost_lines,peak_rss_kib,latency_clock,timer_overhead_ns,p50_ns,p99_ns,p999_ns,p9999_ns,max_ns,system_cpu_s_per_gib,spool_disk_bytes" >"$csv"
: >"$runs_txt"

hms() { awk -v s="$1" 'BEGIN { s = int(s + 0.5); if (s >= 60) printf "%dm%02ds", s / 60, s % 60; else printf "%ds", s }'; }
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
    printf '%s,%s,%s,%s,%s,%s,%s,%s%s\n' "$logger" "$policy" "$size" "$threads" "$n" "$repeat" \
      "$mode" "$status" ",,,,,,,,,,,,,,,,,," >>"$csv"
    return 0
  fi
  # The last summary line is the median (or the only run); likewise for
  # the written/latency lines that follow it.
  awk -v logger="$logger" -v policy="$policy" -v size="$size" -v threads="$threads" \
      -v n="$n" -v repeat="$repeat" -v mode="$mode" '
    / seconds, .* bytes, .* msg\/s, .* MiB\/s$/ { sec = $2; bytes = $4; mps = $6; mibps = $8 }
    $1 == "written" { w = $2; d = $4; l = $6 }
    $1 == "latency_ns" { p50 = $3; p99 = $5; p999 = $7; p9999 = $9; pmax = $11 }
    $1 == "#" && $2 == "latency" && $3 == "clock" { clock = $4; sub(/,$/, "", clock); overhead = $5 }
    $1 == "peak_rss_kib" { rss = $2 }
    $1 == "system_cpu_seconds" { sysgib = $4 }
    $1 == "spool_disk_bytes" { spool = $2 }
    END {
      printf "%s,%s,%s,%s,%s,%s,%s,ok,%s,%s,%s,%s,%s,%s,%s,%.0f,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
        logger, policy, size, threads, n, repeat, mode, sec, bytes, mps, mibps, w, d, l, n - l, rss,
        clock, overhead, p50, p99, p999, p9999, pmax, sysgib, spool
    }' "$tmp/point.out" >>"$csv"
  echo "$(tail -n 1 "$csv" | cut -d, -f11 | awk '{printf "%.0f msg/s", $1}'), $(hms $((SECONDS - t0)))" >&2
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
# CSV fields: 1 logger, 2 policy, 3 size, 4 threads, 5 messages, 6 repeats,
# 7 mode, 8 status, 9 seconds, 10 bytes, 11 msg/s, 12 MiB/s, 13 written,
# 14 dropped, 15 lines, 16 lost lines, 17 peak RSS KiB, 18 clock,
# 19 timer overhead ns, 20-24 p50 p99 p99.9 p99.99 max ns, 25 system CPU
# seconds per GiB logged, 26 spool bytes on disk (muon-crash).
echo "logbench, median of $repeat run(s) per point. msg/s: messages given / seconds from the first"
echo "call until the logger has written and flushed every line (to the page cache; no fsync)."
echo "Lost lines: messages - lines found in the files; only muon (drop) may lose lines, and"
echo "those it must report as dropped."
echo
echo "| logger | size | threads | messages | msg/s | MiB/s | lost lines | vs spdlog-async |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
awk -F, '
  NR == 1 || $7 != "throughput" { next }
  {
    row[++rows] = $0
    if ($1 == "spdlog-async" && $8 == "ok") base[$3 "," $4] = $11
  }
  END {
    for (r = 1; r <= rows; r++) {
      split(row[r], f, ",")
      label = f[1]
      if (f[2] != "-") label = label " (" f[2] ")"
      if (f[8] != "ok") {
        printf "| %s | %s | %s | %s | failed: %s | | | |\n", label, f[3], f[4], f[5], f[8]
        continue
      }
      key = f[3] "," f[4]
      ratio = (key in base && base[key] > 0) ? sprintf("%.2fx", f[11] / base[key]) : "n/a"
      lost = f[16]
      if (f[16] + 0 != f[14] + 0) lost = lost " (reported dropped: " f[14] ")"
      printf "| %s | %s | %s | %s | %.0f | %.1f | %s | %s |\n", \
        label, f[3], f[4], f[5], f[11], f[12], lost, ratio
    }
  }' "$csv"
echo
awk -F, '
  NR > 1 && $7 == "latency" {
    if ($8 != "ok") { printf "Latency point (%s, short, 1 thread): failed: %s.\n", $1, $8; next }
    printf "Latency of one LOG_INFO call, %s (%s), short, %s thread, %s messages, median of %s run(s): ", \
      $1, $2, $4, $5, $6
    printf "p50 %s ns, p99 %s ns, p99.9 %s ns, p99.99 %s ns, max %s ns ", $20, $21, $22, $23, $24
    printf "(clock %s; every sample includes ~%s ns of clock reads).\n", $18, $19
  }
  NR > 1 && $7 == "throughput" && $8 == "ok" && $1 == "muon" && $2 == "block" && $3 == "short" && $4 == 1 {
    printf "Peak RSS of muon (block), short, 1 thread, %s messages: %.1f MiB.\n", $5, $17 / 1024
  }' "$csv"

# Crash-safe against the default mode, point by point (both policy block).
awk -F, '
  NR > 1 && $7 == "throughput" && $8 == "ok" && $2 == "block" && ($1 == "muon" || $1 == "muon-crash") {
    key = $3 "," $4
    mps[$1, key] = $11; rss[$1, key] = $17; sys[$1, key] = $25; spool[key] = $26
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
awk -F, '
  NR > 1 && $7 == "throughput" && $8 == "ok" && $3 == "short" && $4 == 1 && $2 == "block" &&
  ($1 == "muon" || $1 == "muon-zstd" || $1 == "muon-zstd-aes") { mps[$1] = $11; bytes[$1] = $10 }
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
  awk -F, -v dir="$tmp" '
    NR > 1 && $7 == "throughput" && $8 == "ok" {
      name = $1
      if ($2 != "-") name = name "-" $2
      print $4, $11 > (dir "/plot." $3 "." name ".dat")
    }' "$csv"
  # plot_command SIZE MESSAGES: the title and plot line of one panel. Each
  # logger keeps its colour in both panels.
  plot_command() {
    local size=$1 n=$2 sep="" name colour f
    printf 'set title "%s lines, %s messages per run"\nplot ' "$size" "$n"
    for entry in muon-block:#009e73 muon-crash-block:#cc79a7 muon-drop:#56b4e9 spdlog-async:#e69f00 \
                 spdlog-sync:#d55e00 glog:#7f7f7f; do
      name=${entry%%:*}
      colour=${entry#*:}
      f=$tmp/plot.$size.$name.dat
      [ -e "$f" ] || continue
      printf '%s"%s" using 1:2 with linespoints lw 2 pt 7 lc rgb "%s" title "%s"' \
        "$sep" "$f" "$colour" "$name"
      sep=", "
    done
    if [ -z "$sep" ]; then printf '1/0 notitle'; fi
    printf '\n'
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
