#!/usr/bin/env bash
# The pingpong matrix: each framework's own pair (client and server), and
# muon's server against Boost.Asio's with the same client.
# What it runs and writes: help_text below (pingpong_bench.sh --help).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench_name=pingpong_bench

synopsis() {
  cat <<'EOF'
pingpong_bench.sh BUILD_DIR [--quick] [--seconds S] [--repeat R]
                  [--sessions LIST] [--blocks LIST] [--threads LIST] [--busy-us US]
EOF
}

help_text() {
  synopsis
  cat <<'EOF'

For every point (threads x block size x sessions) and every repeat it runs,
one at a time and interleaved so that a change in machine load hits all
alike, these pairs (server, client):
  muon             pingpong_server, pingpong_client (epoll)
  muon-uring       the same, both MUON_USE_URING=1
  muon-uring-busy  the same, both MUON_USE_URING=1 MUON_BUSY_POLL_US=US
  asio-pair        asio_pingpong_server, asio_pingpong_client (epoll)
  asio-uring       asio_pingpong_server_uring, asio_pingpong_client_uring
  floor            epoll_pingpong_server, epoll_pingpong_client (bare epoll)
and, with muon's client against both servers:
  asio             asio_pingpong_server, pingpong_client (the same client)
  muon+asio-c      pingpong_server, asio_pingpong_client
The server binds port 0 and prints the port it got; every child runs under
timeout(1) and is reaped, so a failed run is reported and never hangs.
Client and server share the machine's CPUs, as in the muduo book. Because
the machine may be shared, each run waits for the CPUs to be idle first,
measures the CPU others took meanwhile, and is run again (once) when that
was 20% or more; the share is in the CSV and in the table's note. Waits and
reruns get 3 minutes in all, so a busy machine slows the matrix only so much.

Progress goes to stderr; to stdout, four markdown tables of medians of the
repeats: the pairs (MiB/s and ratios), their CPU seconds per GiB echoed
(client : server), the user-space part of that with the io_uring pair's
ceiling (the better Asio pair's CPU per GiB over muon io_uring's kernel CPU
per GiB: the ratio it could reach if muon's own code cost nothing), and the
same-client runs (muon/asio). Files, in
BUILD_DIR/bench/:
  pingpong.csv       one row per point and pair: median, repeats, failures
  pingpong_runs.csv  one row per run
  pingpong_threads1.png, ... same client: throughput against sessions, one
                     line per server and block size (when gnuplot is installed)
  pingpong_pairs_threads1_block4096.png, ... the pairs, one line per pair

Defaults: sessions 1,10,100,1000; blocks 4096,16384; threads 1,2;
3 s per run, 3 repeats: 384 runs, about 23 minutes on an idle machine. --quick: sessions
1,100,1000, 1 s, 1 repeat: 96 runs, about two minutes. --busy-us US: the busy-poll
window of muon-uring-busy (default 200).
LISTs are comma separated, e.g. --sessions 10000 --blocks 4096 --threads 1
is the 10,000-connection check (needs 2 x 10,000 descriptors; the programs
raise their soft limit to the hard one).
EOF
}

# shellcheck source=examples/bench/bench_lib.sh
. "$here/bench_lib.sh"

take_build_dir "${1:-}"
shift
bin=$build/bin
out=$build/bench

seconds=3 repeat=3
sessions_list=1,10,100,1000 blocks_list=4096,16384 threads_list=1,2
quick=0 seconds_set=0 repeat_set=0 sessions_set=0 busy_us=200
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --seconds) need_value $#; seconds=$2; seconds_set=1; shift ;;
    --repeat) need_value $#; repeat=$2; repeat_set=1; shift ;;
    --sessions) need_value $#; sessions_list=$2; sessions_set=1; shift ;;
    --blocks) need_value $#; blocks_list=$2; shift ;;
    --threads) need_value $#; threads_list=$2; shift ;;
    --busy-us) need_value $#; busy_us=$2; shift ;;
    -h|--help) help_text; exit 0 ;;
    *) echo "$bench_name: unknown option '$1'" >&2; usage ;;
  esac
  shift
done
if [ $quick -eq 1 ]; then
  [ $seconds_set -eq 1 ] || seconds=1
  [ $repeat_set -eq 1 ] || repeat=1
  [ $sessions_set -eq 1 ] || sessions_list=1,100,1000
fi
[[ $seconds =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v s="$seconds" 'BEGIN{exit !(s > 0)}' \
  || die "--seconds wants a positive number, not '$seconds'"
want_count --repeat "$repeat"
want_count --busy-us "$busy_us"
for list in "$sessions_list" "$blocks_list" "$threads_list"; do
  [[ $list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad list '$list' (want e.g. 1,10,100)"
done
IFS=, read -r -a sessions_arr <<<"$sessions_list"
IFS=, read -r -a blocks_arr <<<"$blocks_list"
IFS=, read -r -a threads_arr <<<"$threads_list"

# The runs: label, server, client, environment of both ("-": none).
pairs=("muon pingpong_server pingpong_client -"
       "muon-uring pingpong_server pingpong_client MUON_USE_URING=1"
       "muon-uring-busy pingpong_server pingpong_client MUON_USE_URING=1,MUON_BUSY_POLL_US=$busy_us"
       "asio-pair asio_pingpong_server asio_pingpong_client -"
       "asio-uring asio_pingpong_server_uring asio_pingpong_client_uring -"
       "floor epoll_pingpong_server epoll_pingpong_client -"
       "asio asio_pingpong_server pingpong_client -"
       "muon+asio-c pingpong_server asio_pingpong_client -")
for prog in pingpong_server pingpong_client asio_pingpong_server asio_pingpong_client \
            asio_pingpong_server_uring asio_pingpong_client_uring epoll_pingpong_server epoll_pingpong_client; do
  [ -x "$bin/$prog" ] || echo "pingpong_bench: $bin/$prog is not built; its runs will fail" >&2
done

# Descriptors: each of client and server needs one per session, plus a few.
raise_fd_limit sessions "${sessions_arr[@]}"

mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pingpong_bench.XXXXXX")
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { echo "$EPOCHREALTIME"; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a - b}'; }

# The machine may be shared: measure how much CPU others took during a run.
# busy_ticks: CPU time spent by everyone, in clock ticks (user nice system irq
# softirq steal). our_seconds: CPU time of the children we reaped (servers,
# clients, and the small tools), from bash's `times`.
ncpu=$(nproc 2>/dev/null || echo 1)
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
busy_ticks() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }
# `our_seconds user`: their user time only. (`times` must run in this shell,
# not in a $(...) subshell, whose children start from zero.)
our_seconds() {
  times >"$tmp/times"
  awk -v fields="$([ "${1:-}" = user ] && echo 1 || echo 2)" 'NR == 2 {
    s = 0
    for (i = 1; i <= fields; i++) { split($i, a, "m"); s += a[1] * 60 + substr(a[2], 1, length(a[2]) - 1) }
    print s }' "$tmp/times"
}
# others_pct WALL_START BUSY_START OURS_START OURS_NOW: percent of all CPUs
# used by other processes since then.
others_pct() {
  awk -v w0="$1" -v w1="$(now)" -v b0="$2" -v b1="$(busy_ticks)" -v o0="$3" -v o1="$4" \
      -v hz="$hz" -v n="$ncpu" 'BEGIN {
    p = ((b1 - b0) / hz - (o1 - o0)) / ((w1 - w0) * n) * 100
    printf "%.0f", p < 0 ? 0 : p }'
}

# wait_quiet: before a run, wait (up to 10 s) until the CPUs are nearly idle,
# sampled over 0.2 s; between runs nothing of ours is running. All waits and
# reruns together may take at most wait_budget seconds: on a machine that
# stays busy the matrix then runs on, its runs flagged, rather than for hours.
wait_budget=180 waited=0
budget_left() { awk -v w="$waited" -v b=$wait_budget 'BEGIN{exit !(w < b)}'; }
wait_quiet() {
  local i b0 w0 t0 pct
  budget_left || return 0
  t0=$(now)
  for ((i = 0; i < 50; i++)); do
    b0=$(busy_ticks) w0=$(now)
    sleep 0.2
    pct=$(awk -v w0="$w0" -v w1="$(now)" -v b0="$b0" -v b1="$(busy_ticks)" -v hz="$hz" -v n="$ncpu" \
          'BEGIN {printf "%.0f", (b1 - b0) / hz / ((w1 - w0) * n) * 100}')
    [ "$pct" -ge 15 ] || break
    [ $i -eq 0 ] && echo "pingpong: other processes use ${pct}% of the CPUs; waiting for quiet (10 s at most)" >&2
  done
  waited=$(awk -v w="$waited" -v a="$(now)" -v b="$t0" 'BEGIN{print w + a - b}')
  budget_left || echo "pingpong: the machine stays busy: no more waiting or reruns (see the others_cpu_pct column)" >&2
  return 0
}

# run_one SERVER CLIENT THREADS BLOCK SESSIONS ENV: sets $result to the MiB/s,
# or returns 1 with the reason in $tmp/why; sets $others to others_pct over
# the run, $cpu_per_gib / $client_cpu_per_gib to the server's and the
# client's CPU seconds (user + system) per GiB echoed, and $user_per_gib /
# $client_user_per_gib to their user time alone. ENV: VAR=VALUE,... for
# both, or "-".
# Not in a subshell, so that cleanup() always knows the server to stop.
run_one() {
  local server=$1 client=$2 threads=$3 block=$4 sessions=$5
  local port= i rc w0 b0 o0 c0 u0 envs=()
  [ "$6" = - ] || IFS=, read -r -a envs <<<"$6"
  : >"$tmp/why"
  others=0 cpu_per_gib= client_cpu_per_gib= user_per_gib= client_user_per_gib=
  our_seconds >"$tmp/ours"
  w0=$(now) b0=$(busy_ticks) o0=$(cat "$tmp/ours")
  rm -f "$tmp/server.out"  # a stale port must not be read back
  # The server lives until we stop it; timeout(1) is the net in case we can't.
  timeout -k 2 "$(awk -v s="$seconds" -v n="$sessions" 'BEGIN{print int(s + 60 + n / 200)}')" \
    env "${envs[@]}" "$bin/$server" 127.0.0.1 0 "$threads" >"$tmp/server.out" 2>"$tmp/server.err" &
  server_pid=$!
  for ((i = 0; i < 100; i++)); do
    port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.out" 2>/dev/null || true)
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    echo "$server did not report a port: $(head -c 300 "$tmp/server.err")" >"$tmp/why"
    stop_server
    return 1
  fi
  rc=0
  our_seconds >"$tmp/ours"
  c0=$(cat "$tmp/ours")
  our_seconds user >"$tmp/ours"
  u0=$(cat "$tmp/ours")
  timeout -k 2 "$(awk -v s="$seconds" -v n="$sessions" 'BEGIN{print int(s + 30 + n / 200)}')" \
    env "${envs[@]}" "$bin/$client" 127.0.0.1 "$port" "$threads" "$block" "$sessions" "$seconds" \
    >"$tmp/client.out" 2>"$tmp/client.err" || rc=$?
  # The client is the only child reaped meanwhile: its CPU time.
  our_seconds >"$tmp/ours"
  client_cpu=$(fsub "$(cat "$tmp/ours")" "$c0")
  our_seconds user >"$tmp/ours"
  client_user=$(fsub "$(cat "$tmp/ours")" "$u0")
  server_cpu_seconds
  stop_server
  our_seconds >"$tmp/ours"
  others=$(others_pct "$w0" "$b0" "$o0" "$(cat "$tmp/ours")")
  local mibs
  result=
  mibs=$(awk '$2 == "MiB/s" && $3 == "throughput" {print $1}' "$tmp/client.out")
  if [ $rc -ne 0 ] || [ -z "$mibs" ]; then
    case $rc in
      124|137) echo "$client timed out" >"$tmp/why" ;;
      *) echo "$client exit $rc: $(tail -n 2 "$tmp/client.err" | tr '\n' ' ' | head -c 300)" >"$tmp/why" ;;
    esac
    return 1
  fi
  result=$mibs
  cpu_per_gib=$(per_gib "$server_cpu")
  user_per_gib=$(per_gib "$server_user")
  client_cpu_per_gib=$(per_gib "$client_cpu")
  client_user_per_gib=$(per_gib "$client_user")
}

# per_gib SECONDS: SECONDS per GiB the client read back (= what the server
# echoed), or "" if SECONDS is.
per_gib() {
  awk -v cpu="$1" '$3 == "bytes" && $4 == "read" && $1 > 0 {
    if (cpu != "") printf "%.3f", cpu / ($1 / 1073741824) }' "$tmp/client.out"
}

# server_cpu_seconds: sets $server_cpu to the user + system time the server
# (the child of the timeout process $server_pid) has used so far and
# $server_user to its user time, or both to "".
server_cpu_seconds() {
  local child fields
  server_cpu= server_user=
  child=$(cat "/proc/$server_pid/task/$server_pid/children" 2>/dev/null || true)
  child=${child%% *}
  [ -n "$child" ] || return 0
  fields=$(awk -v hz="$hz" '{sub(/^.*\) /, ""); print ($12 + $13) / hz, $12 / hz}' "/proc/$child/stat" 2>/dev/null || true)
  [ -z "$fields" ] || read -r server_cpu server_user <<<"$fields"
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

# median of the numbers on stdin, with 1 (median) or 3 (median3) decimals
median() { median_fmt %.1f; }
median3() { median_fmt %.3f; }

points=$(( ${#threads_arr[@]} * ${#blocks_arr[@]} * ${#sessions_arr[@]} ))
total_runs=$(( points * repeat * ${#pairs[@]} ))
echo "pingpong: $points points x ${#pairs[@]} pairs x $repeat repeats = $total_runs runs of ${seconds}s" \
     "(estimate $(hms "$(awk -v n=$total_runs -v s="$seconds" 'BEGIN{print n * (s + 0.5)}')"));" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

runs_csv=$out/pingpong_runs.csv
join_csv threads block sessions pair server client env repeat mibs status others_cpu_pct \
  server_cpu_s_per_gib client_cpu_s_per_gib server_user_s_per_gib client_user_s_per_gib >"$runs_csv"
csv=$out/pingpong.csv
join_csv threads block sessions pair server client env median_mibs ok_runs failed_runs \
  max_others_cpu_pct median_server_cpu_s_per_gib median_client_cpu_s_per_gib \
  median_server_user_s_per_gib median_client_user_s_per_gib >"$csv"
: >"$tmp/others"
done_runs=0 point=0
t_start=$(now)
for threads in "${threads_arr[@]}"; do
  for block in "${blocks_arr[@]}"; do
    for sessions in "${sessions_arr[@]}"; do
      point=$((point + 1))
      for p in "${pairs[@]}"; do
        for f in vals cpu ccpu user cuser; do : >"$tmp/$f.${p%% *}"; done
        echo 0 >"$tmp/maxo.${p%% *}"
      done
      for ((r = 1; r <= repeat; r++)); do
        for p in "${pairs[@]}"; do
          read -r label server client envs <<<"$p"
          # A run during which others took 20% of the CPUs or more is done
          # again (once, within the budget); the last one counts.
          for ((attempt = 0; ; attempt++)); do
            wait_quiet
            t_run=$(now)
            run_one "$server" "$client" "$threads" "$block" "$sessions" "$envs" && ok_run=1 || ok_run=0
            [ "$others" -ge 20 ] && [ $attempt -lt 1 ] && budget_left || break
            waited=$(awk -v w="$waited" -v a="$(now)" -v b="$t_run" 'BEGIN{print w + a - b}')
            echo "pingpong: others used ${others}% of the CPUs during that run; running it again" >&2
          done
          if [ $ok_run -eq 1 ]; then
            mibs=$result
            echo "$mibs" >>"$tmp/vals.$label"
            [ -z "$cpu_per_gib" ] || echo "$cpu_per_gib" >>"$tmp/cpu.$label"
            [ -z "$client_cpu_per_gib" ] || echo "$client_cpu_per_gib" >>"$tmp/ccpu.$label"
            [ -z "$user_per_gib" ] || echo "$user_per_gib" >>"$tmp/user.$label"
            [ -z "$client_user_per_gib" ] || echo "$client_user_per_gib" >>"$tmp/cuser.$label"
            status=ok shown="$mibs MiB/s"
          else
            mibs= status=failed shown="FAILED: $(cat "$tmp/why")"
          fi
          echo "$threads,$block,$sessions,$label,$server,$client,${envs//,/ },$r,$mibs,$status,$others,$cpu_per_gib,$client_cpu_per_gib,$user_per_gib,$client_user_per_gib" >>"$runs_csv"
          echo "$others" >>"$tmp/others"
          [ "$others" -le "$(cat "$tmp/maxo.$label")" ] || echo "$others" >"$tmp/maxo.$label"
          [ "$others" -lt 10 ] || shown+=", others used ${others}% CPU"
          done_runs=$((done_runs + 1))
          elapsed=$(fsub "$(now)" "$t_start")
          eta=$(awk -v e="$elapsed" -v d=$done_runs -v t=$total_runs 'BEGIN{print e / d * (t - d)}')
          printf '[%3d/%d] point %d/%d threads=%s block=%s sessions=%s %-15s repeat %d: %s (left: %d runs, ~%s)\n' \
            $done_runs $total_runs $point $points "$threads" "$block" "$sessions" "$label" $r \
            "$shown" $((total_runs - done_runs)) "$(hms "$eta")" >&2
        done
      done
      for p in "${pairs[@]}"; do
        read -r label server client envs <<<"$p"
        ok=$(wc -l <"$tmp/vals.$label")
        med=$(median <"$tmp/vals.$label")
        cpu=$(median3 <"$tmp/cpu.$label")
        ccpu=$(median3 <"$tmp/ccpu.$label")
        user=$(median3 <"$tmp/user.$label")
        cuser=$(median3 <"$tmp/cuser.$label")
        join_csv "$threads" "$block" "$sessions" "$label" "$server" "$client" "${envs//,/ }" "${med:-NA}" \
          "$ok" $((repeat - ok)) "$(cat "$tmp/maxo.$label")" "${cpu:-NA}" "${ccpu:-NA}" \
          "${user:-NA}" "${cuser:-NA}" >>"$csv"
      done
    done
  done
done
echo "pingpong: done in $(hms "$(fsub "$(now)" "$t_start")")" >&2
# A shared machine skews the numbers: say how much CPU others took.
others_note=$(sort -n "$tmp/others" | awk '{v[NR] = $1} END {
  if (NR == 0) exit
  med = v[int((NR + 1) / 2)]; max = v[NR]
  if (max >= 10) printf "Other processes used %d%% of the CPUs in the median run and up to %d%% in one: these numbers are less reliable than on an idle machine.", med, max
  else printf "Other processes used at most %d%% of the CPUs during the runs.", max }')

# The markdown tables: one row per point, read from pingpong.csv by column name.
awk -F, -v repeat="$repeat" -v seconds="$seconds" -v note="$others_note" -v busy="$busy_us" "$csv_header"'
  { key = $col["threads"] " " $col["block"] " " $col["sessions"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    pair = $col["pair"]
    med[key, pair] = $col["median_mibs"]; failed[key, pair] = $col["failed_runs"]
    cpu[key, pair] = $col["median_server_cpu_s_per_gib"]
    ccpu[key, pair] = $col["median_client_cpu_s_per_gib"]
    user[key, pair] = $col["median_server_user_s_per_gib"]
    cuser[key, pair] = $col["median_client_user_s_per_gib"] }
  function known(x) { return x != "NA" && x != "" }
  function cell(k, l) {
    if (med[k, l] == "NA") return "FAILED"
    return med[k, l] (failed[k, l] > 0 ? " (" failed[k, l] " failed)" : "")
  }
  function quotient(a, b) { return (a != "NA" && b != "NA" && b > 0) ? sprintf("%.2f", a / b) : "-" }
  function num(x) { return known(x) ? sprintf("%.2f", x) : "-" }
  # The better Asio pair at point k: the one with the higher median.
  function best_asio(k) {
    if (known(med[k, "asio-uring"]) && (!known(med[k, "asio-pair"]) || med[k, "asio-uring"] + 0 > med[k, "asio-pair"] + 0))
      return "asio-uring"
    return "asio-pair"
  }
  # The ratio the muon io_uring pair would reach against that pair at point k
  # if muon cost no user-space CPU at all: the Asio pair CPU per GiB over
  # the muon io_uring kernel (system) CPU per GiB, both sides added up.
  function ceiling(k,   a, m) {
    a = best_asio(k); m = "muon-uring"
    if (!known(cpu[k, a]) || !known(ccpu[k, a]) || !known(cpu[k, m]) || !known(ccpu[k, m]) ||
        !known(user[k, m]) || !known(cuser[k, m])) return "-"
    return quotient(cpu[k, a] + ccpu[k, a], cpu[k, m] - user[k, m] + ccpu[k, m] - cuser[k, m])
  }
  # The row of point k: seconds per GiB, client : server, one cell per pair,
  # without the closing bar.
  function pair_seconds(k, client, server,   f, j) {
    split(k, f, " ")
    printf "| %s | %s | %s", f[1], f[2], f[3]
    for (j = 1; j <= 6; j++) printf " | %s : %s", num(client[k, ps[j]]), num(server[k, ps[j]])
  }
  END {
    split("muon muon-uring muon-uring-busy asio-pair asio-uring floor", ps, " ")
    printf "Pairs (each framework\047s own client and server). Median of %d run(s) of %s s each, MiB/s (client-side bytes read / s). %s\n\n", repeat, seconds, note
    print "| threads | block | sessions | muon epoll | muon io_uring | muon io_uring busy " busy " us | asio epoll | asio io_uring | bare epoll | uring / best asio | busy / muon epoll | muon epoll / bare | muon epoll / asio epoll |"
    print "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, f, " ")
      ba = med[k, best_asio(k)]
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f[1], f[2], f[3],
             cell(k, "muon"), cell(k, "muon-uring"), cell(k, "muon-uring-busy"), cell(k, "asio-pair"),
             cell(k, "asio-uring"), cell(k, "floor"), quotient(med[k, "muon-uring"], ba),
             quotient(med[k, "muon-uring-busy"], med[k, "muon"]), quotient(med[k, "muon"], med[k, "floor"]),
             quotient(med[k, "muon"], med[k, "asio-pair"])
    }
    print ""
    print "CPU seconds per GiB echoed, client : server (median of the runs; the pairs above)."
    print ""
    print "| threads | block | sessions | muon epoll | muon io_uring | muon io_uring busy | asio epoll | asio io_uring | bare epoll |"
    print "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    for (i = 1; i <= n; i++) { pair_seconds(order[i], ccpu, cpu); print " |" }
    print ""
    print "Of that, user-space CPU seconds per GiB, client : server (the rest is the kernel\047s); and the ceiling: the most the muon io_uring pair could reach against the better Asio pair if muon\047s own code cost nothing, that pair\047s CPU per GiB over muon io_uring\047s kernel CPU per GiB (both sides; it bounds the ratio where both sides are CPU-bound, 10 sessions and up, not at 1 session, where the pairs wait for wake-ups)."
    print ""
    print "| threads | block | sessions | muon epoll | muon io_uring | muon io_uring busy | asio epoll | asio io_uring | bare epoll | uring ceiling vs best asio | uring / best asio |"
    print "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    for (i = 1; i <= n; i++) {
      k = order[i]; pair_seconds(k, cuser, user)
      printf " | %s | %s |\n", ceiling(k), quotient(med[k, "muon-uring"], med[k, best_asio(k)])
    }
    print ""
    printf "Same client (pingpong_client) against both servers, and muon\047s server with Asio\047s client; epoll.\n\n"
    print "| threads | block | sessions | muon | asio | muon/asio | muon server, asio client | server CPU s/GiB muon : asio |"
    print "|--:|--:|--:|--:|--:|--:|--:|--:|"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, f, " ")
      m = med[k, "muon"]; a = med[k, "asio"]
      ratio = (m != "NA" && a != "NA" && a > 0) ? sprintf("%.2f", m / a) : "-"
      printf "| %s | %s | %s | %s | %s | %s | %s | %s : %s |\n", f[1], f[2], f[3],
             cell(k, "muon"), cell(k, "asio"), ratio, cell(k, "muon+asio-c"),
             cpu[k, "muon"] == "NA" ? "-" : sprintf("%.2f", cpu[k, "muon"]),
             cpu[k, "asio"] == "NA" ? "-" : sprintf("%.2f", cpu[k, "asio"])
    }
  }' "$csv"

# Plots: one PNG per thread count, x = sessions (log), a line per server and block.
if ! command -v gnuplot >/dev/null; then
  echo "pingpong_bench: gnuplot not installed; no plots (apt-get install gnuplot-nox)" >&2
  exit 0
fi
rm -f "$out"/pingpong_threads*.png
for threads in "${threads_arr[@]}"; do
  plot=
  colors=('#1f77b4' '#d62728' '#2ca02c' '#ff7f0e' '#9467bd' '#8c564b')  # one per block size
  for label in muon asio; do
    ci=0
    for block in "${blocks_arr[@]}"; do
      color=${colors[ci % ${#colors[@]}]}; ci=$((ci + 1))
      dat=$tmp/plot.$threads.$label.$block
      awk -F, -v t="$threads" -v l="$label" -v b="$block" "$csv_header"'
        $col["threads"] == t && $col["block"] == b && $col["pair"] == l && $col["median_mibs"] != "NA" {
          print $col["sessions"], $col["median_mibs"]
        }' "$csv" | sort -n >"$dat"
      [ -s "$dat" ] || continue
      # Same colour for one block size; muon solid with dots, Asio dashed with squares.
      if [ $label = muon ]; then style="lw 2 pt 7" name=muon; else style="lw 2 pt 5 dt 2" name=Boost.Asio; fi
      style+=" lc rgb '$color'"
      plot+="${plot:+, }'$dat' using 1:2 with linespoints $style title '$name server, $block-byte blocks'"
    done
  done
  [ -n "$plot" ] || continue
  png=$out/pingpong_threads$threads.png
  # gnuplot's warnings (e.g. an x range of one point) are noise; its errors are not.
  gnuplot 2>"$tmp/gnuplot.err" <<EOF || { echo "pingpong_bench: gnuplot failed for $png:" >&2; cat "$tmp/gnuplot.err" >&2; }
set terminal pngcairo size 800,500 font ',10'
set output '$png'
set title 'pingpong throughput, $threads thread(s) per side, median of $repeat x ${seconds}s (same client)'
set xlabel 'concurrent sessions'
set ylabel 'MiB/s'
set logscale x 10
set yrange [0:*]
set grid
set key top left
plot $plot
EOF
  [ -f "$png" ] && echo "pingpong: wrote $png" >&2
done
# The pairs: one PNG per thread count and block size, a line per pair.
for threads in "${threads_arr[@]}"; do
  for block in "${blocks_arr[@]}"; do
    prefix=$tmp/pairs.$threads.$block
    awk -F, -v t="$threads" -v b="$block" -v prefix="$prefix" "$csv_header"'
      $col["threads"] == t && $col["block"] == b && $col["median_mibs"] != "NA" {
        print $col["sessions"], $col["median_mibs"] > (prefix "." $col["pair"] ".dat")
      }' "$csv"
    for f in "$prefix".*.dat; do [ -e "$f" ] && sort -n -o "$f" "$f"; done
    png=$out/pingpong_pairs_threads${threads}_block$block.png
    gnuplot 2>"$tmp/gnuplot.err" <<EOF || { echo "pingpong_bench: gnuplot failed for $png:" >&2; cat "$tmp/gnuplot.err" >&2; }
set terminal pngcairo size 1000,500 font ',10'
set output '$png'
set termoption noenhanced
set title 'pingpong pairs, $threads thread(s) per side, $block-byte blocks, median of $repeat x ${seconds}s (busy: ${busy_us} us)'
set xlabel 'concurrent sessions'
set ylabel 'MiB/s'
set logscale x 10
set yrange [0:*]
set grid
set key outside right top
$(plot_lines "$prefix" muon:#1f77b4 muon-uring:#2ca02c muon-uring-busy:#17becf asio-pair:#d62728 \
    asio-uring:#ff7f0e floor:#7f7f7f)
EOF
    [ -f "$png" ] && echo "pingpong: wrote $png" >&2
  done
done
echo "pingpong: wrote $csv and $runs_csv" >&2
