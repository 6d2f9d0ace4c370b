#!/usr/bin/env bash
# The journald benchmark: muon's JournaldSink against spdlog's systemd_sink,
# lines per second into a real systemd-journald of the benchmark's own. What
# it runs and writes: help_text below (journal_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=journal_bench

synopsis() {
  cat <<'EOF'
journal_bench.sh BUILD_DIR [--quick] [--lines N] [--repeat R]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

For each repeat (default 5), muon, spdlog and floor in turn, each run logs N
statements (default 100,000) of
  "Hello 0123456789 abcdefghijklmnopqrstuvwxyz <i> user=alice count=<i>"
at INFO from one thread (BUILD_DIR/bin/journal_bench) into a systemd-journald
started afresh for the run, with an empty journal:
  muon    muon::JournaldSink (its sender thread does the sends; the entry also
          carries USER and COUNT as journal fields)
  spdlog  spdlog::sinks::systemd_sink_st (sd_journal_send on the calling thread)
  floor   no logger: the message as MESSAGE, PRIORITY and SYSLOG_IDENTIFIER,
          sent with send(2) on the calling thread: what journald itself
          takes per line bounds every logger
journald runs in a mount namespace of the benchmark's own (unshare -m: a tmpfs
over /run with /run/systemd and /run/log bound to a temporary directory under
BUILD_DIR/bench, and its own journald.conf: volatile storage, no rate limit,
no forwarding, no kernel log), so both loggers reach it at the usual
/run/systemd/journal/socket and the system's journald is never touched; it is
killed and reaped after each run. A run's lines per second is N over the time
until the last line was handed to journald's socket; after it, the entries in
the journal are counted (journalctl -D), and a run that did not get all N
there is reported; journald's own CPU time (/proc) is kept too. Needs root (the mount namespace) and libsystemd-dev for
the peer (./build.sh bench installs it).

To stdout, a markdown table of the medians, with muon's as a ratio of
spdlog's; to BUILD_DIR/bench/journal.csv one row per run. It takes
/tmp/muon-bench.lock for the whole run (MUON_BENCH_LOCK=FILE for a smoke
run). --quick: 20,000 lines, 3 repeats.
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
lines=100000
repeat=5
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) lines=20000; repeat=3 ;;
    --lines) need_value $#; want_count --lines "$2" 100000000; lines=$2; shift ;;
    --repeat) need_value $#; want_count --repeat "$2" 100; repeat=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done

bin=$build/bin/journal_bench
[ -x "$bin" ] || die "$bin is missing: it needs libspdlog-dev and libsystemd-dev (./build.sh bench installs them)"
journald=/lib/systemd/systemd-journald
[ -x "$journald" ] || die "$journald is missing (Debian package systemd)"
[ "$(id -u)" = 0 ] || die "needs root: journald runs in a mount namespace of its own"

take_bench_lock
mkdir -p "$build/bench"
work=$(mktemp -d "$build/bench/journal.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/journald.conf" <<'EOF'
[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
RateLimitIntervalSec=0
RuntimeMaxUse=4G
RuntimeMaxFileSize=1G
EOF

# One run in the namespace: journald started on an empty journal, the
# logger, the count, journald killed. Prints journal_bench's line and
# "in_journal N".
run_one() {
  local logger=$1 id=$2
  rm -rf "$work/systemd" "$work/log"
  mkdir -p "$work/systemd" "$work/log"
  unshare -m bash -s "$work" "$journald" "$bin" "$logger" "$lines" "$id" <<'INNER'
set -euo pipefail
work=$1 journald=$2 bin=$3 logger=$4 lines=$5 id=$6
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mkdir -p /run/systemd /run/log
mount --bind "$work/systemd" /run/systemd
mount --bind "$work/log" /run/log
mount --bind "$work/journald.conf" /etc/systemd/journald.conf
"$journald" 2>"$work/journald.err" &
jpid=$!
trap 'kill -9 $jpid 2>/dev/null; wait $jpid 2>/dev/null || true' EXIT
for _ in $(seq 1 1000); do [ -S /run/systemd/journal/socket ] && break; sleep 0.01; done
[ -S /run/systemd/journal/socket ] || { echo "journald did not start: $(cat "$work/journald.err")" >&2; exit 1; }
"$bin" --logger "$logger" --lines "$lines" --identifier "$id"
# journald reads what its socket still holds, then the count.
want=$lines
for _ in $(seq 1 3000); do
  have=$(journalctl -D /run/log/journal SYSLOG_IDENTIFIER="$id" -o cat --no-pager 2>/dev/null | wc -l)
  [ "$have" -ge "$want" ] && break
  sleep 0.02
done
echo "in_journal $have"
# journald's CPU for the run (utime + stime, in clock ticks).
awk '{ print "journald_ticks", $14 + $15 }' /proc/$jpid/stat
INNER
}

csv=$build/bench/journal.csv
echo "logger,run,lines,calls_seconds,delivered_seconds,lines_per_second,lost,in_journal,journald_us_per_line" > "$csv"
for r in $(seq 1 "$repeat"); do
  for logger in muon spdlog floor; do
    echo "== journal $logger run $r/$repeat ($lines lines)" >&2
    out=$(run_one "$logger" "journal-bench-$logger-$r-$$")
    line=$(grep '^journal_bench:' <<<"$out")
    have=$(awk '/^in_journal/ { print $2 }' <<<"$out")
    ticks=$(awk '/^journald_ticks/ { print $2 }' <<<"$out")
    journald_us=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v n="$lines" 'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
    read -r calls delivered rate lost < <(awk '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
      print v["calls_seconds"], v["delivered_seconds"], v["lines_per_second"], v["lost"] }' <<<"$line")
    [ "$have" = "$lines" ] || echo "$bench_name: $logger run $r: $have of $lines lines in the journal" >&2
    echo "$logger,$r,$lines,$calls,$delivered,$rate,$lost,$have,$journald_us" >> "$csv"
  done
done

median_of() {  # LOGGER COLUMN
  awk -F, -v logger="$1" -v name="$2" "$csv_header"' $col["logger"] == logger { print $col[name] }' "$csv" |
    median_fmt '%.0f'
}
calls_rate() {  # LOGGER: the calling thread's lines per second, median
  awk -F, -v logger="$1" "$csv_header"' $col["logger"] == logger { print $col["lines"] / $col["calls_seconds"] }' "$csv" |
    median_fmt '%.0f'
}
muon_rate=$(median_of muon lines_per_second)
spdlog_rate=$(median_of spdlog lines_per_second)
echo "journald, $lines lines a run, medians of $repeat runs (a fresh journald each; interleaved):"
echo
echo "| logger | lines/s into journald | x spdlog | calls/s on the calling thread | journald CPU us/line | lost | lines in the journal (least) |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for logger in muon spdlog floor; do
  rate=$(median_of "$logger" lines_per_second)
  least=$(awk -F, -v logger="$logger" "$csv_header"' $col["logger"] == logger { print $col["in_journal"] }' "$csv" | sort -g | head -n 1)
  lost=$(median_of "$logger" lost)
  us=$(awk -F, -v logger="$logger" "$csv_header"' $col["logger"] == logger { print $col["journald_us_per_line"] }' "$csv" | median_fmt '%.2f')
  printf '| %s | %s | %.2f | %s | %s | %s | %s |\n' "$logger" "$rate" \
    "$(awk -v a="$rate" -v b="$spdlog_rate" 'BEGIN { print a / b }')" "$(calls_rate "$logger")" "$us" "$lost" "$least"
done
echo
echo "muon/spdlog: $(awk -v a="$muon_rate" -v b="$spdlog_rate" 'BEGIN { printf "%.2f", a / b }')x. Runs: $csv"
