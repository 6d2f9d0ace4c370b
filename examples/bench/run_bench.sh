#!/usr/bin/env bash
# What `./build.sh bench` runs once the build is done: the logging table,
# zlog's logging matrix, the latency of one log call, then the pingpong
# matrix, then the HTTP table, then the shipping table, then the journald table. Usage: help_text
# below (run_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=run_bench

synopsis() {
  cat <<'EOF'
run_bench.sh BUILD_DIR [--quick] [--only logging|matrix|latency|pingpong|http|ship|journal|tls] [--seconds S]
             [--repeat R] [--sessions LIST] [--blocks LIST] [--threads LIST]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

1. the logging table   (examples/bench/logging_bench.sh BUILD_DIR [--quick] [--repeat R])
2. zlog's logging matrix (examples/bench/matrix_bench.sh BUILD_DIR [--quick])
3. the latency of one log call (examples/bench/latency_bench.sh BUILD_DIR [--quick] [--repeat R])
4. the pingpong matrix (examples/bench/pingpong_bench.sh, see its --help)
5. the HTTP table     (examples/bench/http_bench.sh BUILD_DIR [--quick] [--repeat R];
                       it takes /tmp/muon-bench.lock itself, see its --help)
6. the shipping table (examples/bench/ship_bench.sh BUILD_DIR [--quick] [--repeat R];
                       RELP into rsyslogd; it takes the lock itself too)
7. the journald table (examples/bench/journal_bench.sh BUILD_DIR [--quick] [--repeat R];
                       muon's JournaldSink against spdlog's systemd_sink into a private
                       journald; it takes the lock itself)
8. the TLS pingpong table (examples/bench/tls_bench.sh, see its --help): --only tls only
one after the other, never together: they would share the CPUs.
--seconds and the three lists are for pingpong only. Markdown tables go to
stdout, progress to stderr; CSV and JSON files and PNG plots to BUILD_DIR/bench/.
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
args="$*"

only=all
common=()     # for every benchmark
pingpong=()   # for pingpong only
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) common+=(--quick) ;;
    --only)
      need_value $#
      case "$2" in
        logging|matrix|latency|pingpong|http|ship|journal|tls) only=$2 ;;
        *) echo "$bench_name: --only logging|matrix|latency|pingpong|http|ship|journal|tls" >&2; usage ;;
      esac
      shift ;;
    --repeat) need_value $#; common+=(--repeat "$2"); shift ;;
    --seconds|--sessions|--blocks|--threads)
      need_value $#; pingpong+=("$1" "$2"); shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done

status=0
section() { printf '\n## %s\n\n' "$1"; }

machine() {
  local model cores
  model=$(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
  cores=$(nproc 2>/dev/null || echo '?')
  echo "Machine: ${model:-unknown CPU}, $cores CPUs, Linux $(uname -r);" \
       "fd limit $(ulimit -n); $(date -u '+%Y-%m-%d %H:%M UTC')"
}

echo "# muon benchmarks"
echo
machine
echo "Command: ./build.sh bench${args:+ $args}"

if [ $only = all ] || [ $only = logging ]; then
  section "Logging"
  echo "== logging benchmark" >&2
  "$here/logging_bench.sh" "$build" "${common[@]}" || { echo "run_bench: logging benchmark failed" >&2; status=1; }
fi

if [ $only = all ] || [ $only = matrix ]; then
  section "Logging matrix (zlog's table)"
  echo "== logging matrix" >&2
  "$here/matrix_bench.sh" "$build" "${common[@]}" || { echo "run_bench: logging matrix failed" >&2; status=1; }
fi

if [ $only = all ] || [ $only = latency ]; then
  section "Logging latency"
  echo "== logging latency" >&2
  "$here/latency_bench.sh" "$build" "${common[@]}" || { echo "run_bench: logging latency failed" >&2; status=1; }
fi

if [ $only = all ] || [ $only = pingpong ]; then
  section "Pingpong"
  echo "== pingpong benchmark" >&2
  "$here/pingpong_bench.sh" "$build" "${common[@]}" "${pingpong[@]}" || { echo "run_bench: pingpong benchmark failed" >&2; status=1; }
fi

if [ $only = all ] || [ $only = http ]; then
  section "HTTP"
  echo "== http benchmark" >&2
  "$here/http_bench.sh" "$build" "${common[@]}" || { echo "run_bench: http benchmark failed" >&2; status=1; }
fi

if [ $only = all ] || [ $only = ship ]; then
  section "Shipping (RELP)"
  echo "== ship benchmark" >&2
  "$here/ship_bench.sh" "$build" "${common[@]}" || { echo "run_bench: ship benchmark failed" >&2; status=1; }
fi

if [ $only = all ] || [ $only = journal ]; then
  section "journald"
  echo "== journal benchmark" >&2
  "$here/journal_bench.sh" "$build" "${common[@]}" || { echo "run_bench: journal benchmark failed" >&2; status=1; }
fi

if [ $only = tls ]; then
  section "Pingpong over TLS"
  echo "== tls benchmark" >&2
  "$here/tls_bench.sh" "$build" "${common[@]}" || { echo "run_bench: tls benchmark failed" >&2; status=1; }
fi

echo
echo "Files: $(cd "$build/bench" 2>/dev/null && ls -- *.csv *.json *.png 2>/dev/null | sed "s|^|$build/bench/|" | tr '\n' ' ')"
exit $status
