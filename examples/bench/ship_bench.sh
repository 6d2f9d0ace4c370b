#!/usr/bin/env bash
# The shipping benchmark: muon-ship against rsyslog's own imfile -> omrelp
# pipeline and against a bare RELP sender, all into one receiving rsyslogd;
# and the latency of a line shipped from inside a server. What it runs and
# writes: help_text below (ship_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=ship_bench

synopsis() {
  cat <<'EOF'
ship_bench.sh BUILD_DIR [--quick] [--lines N] [--repeat R] [--windows LIST]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

N numbered muon log lines (default 200,000, ~105 bytes each, in four
rolled files of basename app) are written first. Then, for every window
(default 128,1024) and repeat, interleaved so that a change in machine load
hits all alike, each sender delivers all N lines over RELP into a receiving
rsyslogd (imrelp, main queue Direct, omfile writing each message's MSG as
one line), started afresh for each run:
  muon-ship    build/bin/muon-ship --relp ... --state ... --window W BASENAME
  rsyslog      a second rsyslogd reading the same files with imfile (inotify
               mode) and forwarding them with omrelp (windowSize W), its
               main queue rsyslog's default (in memory)
  bare-relp    build/bin/relp_flood --window W FILES: the same RFC 5424
               messages muon-ship sends, built before it connects; it only
               writes frames and reads acknowledgements (the ceiling)
A run's time goes from the sender's start (for bare-relp: from the end of
building its frames) to the moment the receiver's file holds N lines
(ship_bench_probe counts them every 5 ms); its CPU is the sender's user +
system time then (/proc/PID/stat; for bare-relp less the building), per
million lines, and the receiver's likewise. Then the in-process latency:
ship_latency logs lines at 500 a second through an AsyncLogging
(flushInterval 1 s) whose afterWrite wakes a LogShipper on an EventLoopThread
in the same process, and times each line from the LOG_INFO to its appearance
in the receiver's file (p50, p90, p99, max of every line of a run; the
medians across runs).

Every daemon has its own configuration, work directory and free loopback
port in a temporary directory under BUILD_DIR/bench (the build's disk, not
a tmpfs) and is killed and reaped, whatever happens. It takes
/tmp/muon-bench.lock exclusively for the whole run (MUON_BENCH_LOCK=FILE
for a smoke run; see http_bench.sh --help).

Progress goes to stderr; to stdout, a markdown table of the medians. Files,
in BUILD_DIR/bench/:
  ship.csv          one row per window and sender: medians, runs, failures
  ship_runs.csv     one row per run
  ship_latency.csv  one row per latency run
  ship.png          lines/s against the window, one line per sender (gnuplot)
Defaults: 3 repeats, 5,000 latency lines (10 s) per repeat: about 10
minutes. --quick: 100,000 lines, 1 repeat, 1,500 latency lines.
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
bin=$build/bin
out=$build/bench
rsyslogd=/usr/sbin/rsyslogd

lines=200000 repeat=3 windows_list=128,1024 latency_lines=5000 latency_rate=500
quick=0 lines_set=0 repeat_set=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --lines) need_value $#; lines=$2; lines_set=1; shift ;;
    --repeat) need_value $#; repeat=$2; repeat_set=1; shift ;;
    --windows) need_value $#; windows_list=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
if [ $quick -eq 1 ]; then
  [ $lines_set -eq 1 ] || lines=100000
  [ $repeat_set -eq 1 ] || repeat=1
  latency_lines=1500
fi
want_count --lines "$lines"
want_count --repeat "$repeat"
[[ $windows_list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad list '$windows_list' (want e.g. 128,1024)"
IFS=, read -r -a windows <<<"$windows_list"
for prog in muon-ship relp_flood ship_latency ship_bench_probe; do
  [ -x "$bin/$prog" ] || die "$bin/$prog is not built (it needs muon::ship: libzstd-dev, libssl-dev)"
done
[ -x $rsyslogd ] || die "$rsyslogd is not installed (apt-get install rsyslog rsyslog-relp)"
for module in imrelp omrelp imfile; do
  compgen -G "/usr/lib/*/rsyslog/$module.so" >/dev/null || compgen -G "/usr/lib/rsyslog/$module.so" >/dev/null \
    || die "rsyslog's $module is not installed (apt-get install rsyslog rsyslog-relp)"
done

take_bench_lock

mkdir -p "$out"
tmp=$(mktemp -d "$out/ship.XXXXXX")
pids=()  # every daemon and sender started and not yet reaped
# stop PID [SIGNAL]: signal it (SIGTERM by default), SIGKILL after 15 s, reap it.
stop() {
  local pid=$1 sig=${2:-TERM} i
  [ -n "$pid" ] && [ "$pid" -gt 0 ] || return 0
  kill -s "$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < 300; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
    sleep 0.05
  done
  kill -s KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local kept=() p
  for p in "${pids[@]}"; do [ "$p" = "$pid" ] || kept+=("$p"); done
  pids=("${kept[@]}")
}
cleanup() {
  local p
  for p in "${pids[@]}"; do stop "$p" KILL; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- The lines ------------------------------------------------------------
# Four rolled files of the basename app, the way LogFile names them; each line
# in muon's layout with its number.
logs=$tmp/logs
mkdir -p "$logs"
echo "ship: writing $lines lines" >&2
for part in 0 1 2 3; do
  awk -v part=$part -v from=$((lines * part / 4)) -v to=$((lines * (part + 1) / 4)) 'BEGIN {
    for (i = from; i < to; i++)
      printf "20261127 01:00:0%d.%06dZ  4242 INFO  request %07d served GET /api/v1/items in 1.23 ms - Handler.cc:88\n",
             part, i % 1000000, i
  }' >"$logs/app.20261127-01000$part.benchhost.4242.log"
done

# ---- The receiving rsyslogd -----------------------------------------------
# start_receiver DIR: its configuration in DIR, a free port in $port, its pid
# in $receiver; its output DIR/out.log, one line per message (its MSG).
start_receiver() {
  local dir=$1 i
  rm -rf "$dir"
  mkdir -p "$dir/work"
  port=$("$bin/ship_bench_probe" port)
  cat >"$dir/rsyslog.conf" <<EOF
global(workDirectory="$dir/work")
main_queue(queue.type="Direct")
module(load="imrelp")
input(type="imrelp" address="127.0.0.1" port="$port" ruleset="bench")
template(name="benchLine" type="string" string="%msg%\n")
ruleset(name="bench") {
  action(type="omfile" file="$dir/out.log" template="benchLine")
}
EOF
  $rsyslogd -n -f "$dir/rsyslog.conf" -i "$dir/rsyslogd.pid" 2>"$dir/rsyslogd.err" &
  receiver=$!
  pids+=("$receiver")
  for ((i = 0; i < 200; i++)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$receiver" 2>/dev/null || break
    sleep 0.05
  done
  echo "the receiving rsyslogd did not listen on $port: $(head -c 300 "$dir/rsyslogd.err")" >"$tmp/why"
  stop "$receiver" KILL
  return 1
}

# The forwarding rsyslogd of the `rsyslog` sender: imfile -> omrelp.
write_forwarder_config() {
  local dir=$1 window=$2
  rm -rf "$dir"
  mkdir -p "$dir/work"
  cat >"$dir/rsyslog.conf" <<EOF
global(workDirectory="$dir/work")
module(load="imfile" mode="inotify")
input(type="imfile" File="$logs/app.*.log*" Tag="app" freshStartTail="off" ruleset="forward")
module(load="omrelp")
ruleset(name="forward") {
  action(type="omrelp" target="127.0.0.1" port="$port" windowSize="$window")
}
EOF
}

# run_one SENDER WINDOW: sets $seconds, $sender_cpu, $receiver_cpu (CPU
# seconds) and $arrived, or returns 1 with the reason in $tmp/why.
run_one() {
  local sender=$1 window=$2 since pid cpu_base=0 rc=0 result i
  local run=$tmp/run recv=$tmp/recv
  : >"$tmp/why"
  rm -rf "$run"
  mkdir -p "$run"
  start_receiver "$recv" || return 1
  since=$(date +%s%N)
  case $sender in
    muon-ship)
      "$bin/muon-ship" --relp "127.0.0.1:$port" --state "$run/state" --window "$window" \
        "$logs/app" >"$run/sender.out" 2>"$run/sender.err" &
      pid=$! ;;
    rsyslog)
      write_forwarder_config "$run/forward" "$window"
      $rsyslogd -n -f "$run/forward/rsyslog.conf" -i "$run/forward/rsyslogd.pid" \
        >"$run/sender.out" 2>"$run/sender.err" &
      pid=$! ;;
    bare-relp)
      "$bin/relp_flood" --relp "127.0.0.1:$port" --window "$window" "$logs"/app.*.log \
        >"$run/sender.out" 2>"$run/sender.err" &
      pid=$!
      # Its clock starts once the frames are built.
      for ((i = 0; i < 1200; i++)); do
        read -r _ _ since _ cpu_base < <(grep -m 1 '^sending at ' "$run/sender.out" 2>/dev/null || echo "- - - - -")
        [ "$since" != - ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
      done
      if [ "$since" = - ]; then
        echo "relp_flood did not start sending: $(head -c 300 "$run/sender.err")" >"$tmp/why"
        stop "$pid" KILL; stop "$receiver" KILL
        return 1
      fi ;;
  esac
  pids+=("$pid")
  result=$("$bin/ship_bench_probe" wait "$recv/out.log" "$lines" "$since" 600 "$pid" "$receiver" \
             2>"$run/probe.err") || rc=$?
  stop "$pid"
  stop "$receiver"
  arrived=$(wc -l <"$recv/out.log" 2>/dev/null || echo 0)
  if [ $rc -ne 0 ]; then
    echo "$(cat "$run/probe.err"); sender: $(tail -c 300 "$run/sender.err" | tr '\n' ' ')" >"$tmp/why"
    return 1
  fi
  read -r _ seconds _ sender_cpu _ receiver_cpu <<<"$result"
  sender_cpu=$(awk -v c="$sender_cpu" -v b="$cpu_base" 'BEGIN { printf "%.2f", c - b / 1e9 }')
  if [ "$sender" = muon-ship ] && ! grep -q "^shipped $lines lines, resent 0, skipped 0$" "$run/sender.out"; then
    echo "muon-ship said: $(cat "$run/sender.out" "$run/sender.err" | head -c 300)" >"$tmp/why"
    return 1
  fi
}

senders=(muon-ship rsyslog bare-relp)
total_runs=$(( ${#windows[@]} * ${#senders[@]} * repeat ))
echo "ship: ${#windows[@]} windows x ${#senders[@]} senders x $repeat repeats = $total_runs runs of $lines lines," \
     "then $repeat latency run(s) of $latency_lines lines" >&2

runs_csv=$out/ship_runs.csv
join_csv window sender repeat lines seconds lines_per_s sender_cpu_s_per_M receiver_cpu_s_per_M arrived status >"$runs_csv"
done_runs=0
for ((r = 1; r <= repeat; r++)); do
  for window in "${windows[@]}"; do
    for sender in "${senders[@]}"; do
      seconds= rate= scpu= rcpu= arrived=
      if run_one "$sender" "$window"; then
        rate=$(awk -v n="$lines" -v s="$seconds" 'BEGIN { printf "%.0f", n / s }')
        scpu=$(awk -v n="$lines" -v c="$sender_cpu" 'BEGIN { printf "%.2f", c * 1e6 / n }')
        rcpu=$(awk -v n="$lines" -v c="$receiver_cpu" 'BEGIN { printf "%.2f", c * 1e6 / n }')
        status=ok shown="$rate lines/s, ${scpu} CPU s/M (receiver $rcpu), $arrived lines arrived"
      else
        status=failed shown="FAILED: $(cat "$tmp/why")"
      fi
      join_csv "$window" "$sender" "$r" "$lines" "$seconds" "$rate" "$scpu" "$rcpu" "$arrived" "$status" >>"$runs_csv"
      done_runs=$((done_runs + 1))
      printf '[%d/%d] window=%s %-9s repeat %d: %s\n' $done_runs $total_runs "$window" "$sender" $r "$shown" >&2
    done
  done
done

latency_csv=$out/ship_latency.csv
join_csv repeat lines rate flush_interval p50_ms p90_ms p99_ms max_ms status >"$latency_csv"
for ((r = 1; r <= repeat; r++)); do
  : >"$tmp/why"
  status=failed result=
  if start_receiver "$tmp/recv"; then
    rm -rf "$tmp/lat"
    mkdir -p "$tmp/lat"
    if result=$(timeout -k 5 $((latency_lines / latency_rate + 60)) "$bin/ship_latency" \
                  --relp "127.0.0.1:$port" --out "$tmp/recv/out.log" --dir "$tmp/lat" \
                  --lines "$latency_lines" --rate "$latency_rate" 2>"$tmp/lat.err"); then
      status=ok
    else
      echo "ship_latency failed: $(tail -c 300 "$tmp/lat.err" | tr '\n' ' ')" >"$tmp/why"
    fi
    stop "$receiver"
  fi
  if [ $status = ok ]; then
    # "lines N rate R flush_interval S p50_ms A p90_ms B p99_ms C max_ms D"
    awk -v r=$r '{ printf "%s,%s,%s,%s,%s,%s,%s,%s,ok\n", r, $2, $4, $6, $8, $10, $12, $14 }' \
      <<<"$result" >>"$latency_csv"
    echo "[latency $r/$repeat] $result" >&2
  else
    join_csv "$r" "$latency_lines" "$latency_rate" 1 "" "" "" "" failed >>"$latency_csv"
    echo "[latency $r/$repeat] FAILED: $(cat "$tmp/why")" >&2
  fi
done

# ---- The medians ----------------------------------------------------------
csv=$out/ship.csv
join_csv window sender median_lines_per_s median_sender_cpu_s_per_M median_receiver_cpu_s_per_M \
  ok_runs failed_runs >"$csv"
for window in "${windows[@]}"; do
  for sender in "${senders[@]}"; do
    pick() {  # pick COLUMN: the column of the ok runs of this cell
      awk -F, -v w="$window" -v s="$sender" -v c="$1" "$csv_header"'
        $col["window"] == w && $col["sender"] == s && $col["status"] == "ok" { print $col[c] }' "$runs_csv"
    }
    ok=$(pick lines_per_s | wc -l)
    join_csv "$window" "$sender" "$(pick lines_per_s | median_fmt %.0f)" \
      "$(pick sender_cpu_s_per_M | median_fmt %.2f)" "$(pick receiver_cpu_s_per_M | median_fmt %.2f)" \
      "$ok" $((repeat - ok)) >>"$csv"
  done
done

# ---- The table ------------------------------------------------------------
echo "$lines numbered lines (~105 bytes) from four rolled files into a receiving rsyslogd (imrelp, main"
echo "queue Direct, omfile); median of $repeat run(s). Lines/s from the sender's start until the"
echo "receiver's file holds every line; CPU seconds per million lines (user + system, /proc/PID/stat)."
echo
echo "| window | muon-ship lines/s | rsyslog imfile→omrelp lines/s | bare RELP lines/s | muon-ship/rsyslog | muon-ship/bare | CPU s/M muon-ship | CPU s/M rsyslog | CPU s/M bare | receiver CPU s/M (muon-ship) |"
echo "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
awk -F, "$csv_header"'
  { k = $col["window"]
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    rate[k, $col["sender"]] = $col["median_lines_per_s"]
    cpu[k, $col["sender"]] = $col["median_sender_cpu_s_per_M"]
    rcpu[k, $col["sender"]] = $col["median_receiver_cpu_s_per_M"]
    failed[k, $col["sender"]] = $col["failed_runs"] }
  function cell(k, s) {
    if (rate[k, s] == "") return "FAILED"
    return rate[k, s] (failed[k, s] > 0 ? " (" failed[k, s] " failed)" : "")
  }
  function value(v) { return v == "" ? "-" : v }
  function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2f", a / b) : "-" }
  END {
    for (i = 1; i <= n; i++) {
      k = order[i]
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k,
             cell(k, "muon-ship"), cell(k, "rsyslog"), cell(k, "bare-relp"),
             ratio(rate[k, "muon-ship"], rate[k, "rsyslog"]), ratio(rate[k, "muon-ship"], rate[k, "bare-relp"]),
             value(cpu[k, "muon-ship"]), value(cpu[k, "rsyslog"]), value(cpu[k, "bare-relp"]),
             value(rcpu[k, "muon-ship"])
    }
  }' "$csv"
echo
ok_latency=$(awk -F, "$csv_header"' $col["status"] == "ok"' "$latency_csv" | wc -l)
latency_cell() {  # latency_cell COLUMN: the median of the ok runs
  awk -F, -v c="$1" "$csv_header"' $col["status"] == "ok" { print $col[c] }' "$latency_csv" | median_fmt %.1f
}
echo "In-process latency (LogShipper woken by AsyncLogging::Options::afterWrite, flushInterval 1 s,"
echo "window 128), LOG_INFO to the line in the receiver's file, $latency_lines lines at $latency_rate/s;"
echo "median of $ok_latency run(s) of $repeat:"
echo
echo "| p50 ms | p90 ms | p99 ms | max ms |"
echo "|--:|--:|--:|--:|"
echo "| $(latency_cell p50_ms) | $(latency_cell p90_ms) | $(latency_cell p99_ms) | $(latency_cell max_ms) |"

# ---- The plot -------------------------------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
  for sender in "${senders[@]}"; do
    awk -F, -v s="$sender" "$csv_header"'$col["sender"] == s && $col["median_lines_per_s"] != "" {
      print $col["window"], $col["median_lines_per_s"] }' "$csv" | sort -n >"$tmp/plot.$sender.dat"
    [ -s "$tmp/plot.$sender.dat" ] || rm -f "$tmp/plot.$sender.dat"
  done
  png=$out/ship.png
  gnuplot 2>"$tmp/gnuplot.err" <<EOF || { echo "$bench_name: gnuplot failed for $png:" >&2; cat "$tmp/gnuplot.err" >&2; }
set terminal pngcairo size 800,500 font ',10'
set output '$png'
set termoption noenhanced
set title 'RELP shipping into rsyslogd, $lines lines, median of $repeat run(s)'
set xlabel 'window (frames unacknowledged)'
set ylabel 'lines/s delivered'
set logscale x 2
set yrange [0:*]
set grid
set key top left
$(plot_lines "$tmp/plot" muon-ship:#009e73 rsyslog:#d55e00 bare-relp:#0072b2)
EOF
else
  echo "$bench_name: gnuplot is not installed (apt-get install gnuplot-nox): no plot" >&2
fi
echo "$bench_name: wrote $csv, $runs_csv and $latency_csv" >&2
