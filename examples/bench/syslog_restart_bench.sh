#!/bin/bash
# SyslogSink over UDP while rsyslogd is SIGKILLed and restarted five times,
# 200,000 lines at 20,000 lines/s (tests/base/sinks/SyslogSinkRestarts_test):
# RUNS runs (default 5), one at a time under /tmp/muon-bench.lock, and per run
# the lines lost without being counted and how long append() took around the
# restarts; then the medians and the worst. docs/logging.md "Syslog" has the
# figures.
#   examples/bench/syslog_restart_bench.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-5}
test=$build/bin/SyslogSinkRestarts_test
[ -x "$test" ] || { echo "no $test: cmake --build $build --target SyslogSinkRestarts_test" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 1; i <= runs; i++)); do
  flock /tmp/muon-bench.lock env MUON_REQUIRE_ALL=1 "$test" \
    --gtest_filter=SyslogSinkRestarts.UdpFiveDaemonRestartsLoseAtMost500LinesUncounted \
    | grep -E '^(lines|append)' | tr '\n' ' ' >>"$out" || true  # a run over 500 fails the test
  echo >>"$out"
done
echo "| run | uncounted | lost (counted) | append p99.9 ns | append max near restarts ns | appends over 1 ms (preempted) | appends that slept |"
echo "|---|---|---|---|---|---|---|"
awk '{
  for (i = 1; i <= NF; i++) {
    if ($i == "uncounted") u = $(i + 1)
    if ($i == "lost") l = $(i + 1)
    if ($i == "p99.9") p = $(i + 1)
    if ($i == "restarts") m = $(i + 1)
    if ($i == "1" && $(i + 1) == "ms") { o = $(i + 2); pr = $(i + 4); sub(/\).*/, "", pr) }
    if ($i == "slept") s = $(i + 1)
  }
  printf "| %d | %s | %s | %s | %s | %s (%s) | %s |\n", NR, u, l, p, m, o, pr, s
}' "$out"
