#!/usr/bin/env bash
# profile.sh BUILD_DIR OUT_DIR [logging|pingpong|all]
#
# The profiles docs/ quotes, reproducible: perf record -g on
#   logging   logbench, short lines, 1 thread and 16 threads
#   pingpong  pingpong_server (1 thread) under pingpong_client, 16 KiB blocks,
#             10 sessions, 5 seconds
# and the top symbols by self time and by inclusive time for each, in
# OUT_DIR/<name>.self.txt and <name>.children.txt beside <name>.perf.data.
# The event is the software clock (cpu-clock), which every machine has
# (hardware counters are often missing in VMs). BUILD_DIR is a build with
# frame pointers (./build.sh profile makes build-profile/ so), so that
# call graphs reach through our code.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: profile.sh BUILD_DIR OUT_DIR [logging|pingpong|all]
  records perf profiles of logbench (1 and 16 threads) and of pingpong_server
  under pingpong_client, and prints the top symbols of each
USAGE
}

[ $# -ge 2 ] || { usage >&2; exit 2; }
bin=$1/bin
out=$2
what=${3:-all}
case "$what" in logging|pingpong|all) ;; *) usage >&2; exit 2 ;; esac
command -v perf >/dev/null || { echo "profile.sh: perf is missing (Debian: linux-perf)" >&2; exit 1; }
mkdir -p "$out"

# How many symbols each summary shows.
top=15

# report NAME [COMMS]: the two summaries of OUT/NAME.perf.data (only the
# threads named in COMMS, if given), printed and kept.
report() {
  local name=$1 data="$out/$1.perf.data" comms=()
  [ $# -ge 2 ] && comms=(--comms "$2")
  perf report -i "$data" "${comms[@]}" --no-children --stdio --percentage relative --percent-limit 0.5 \
    --sort comm,dso,symbol -g none 2>/dev/null | grep -v '^#' | grep -v '^$' \
    | sed 's/  *$//' | cut -c1-160 >"$out/$name.self.txt" || true
  perf report -i "$data" "${comms[@]}" --children --stdio --percentage relative --percent-limit 0.5 --sort symbol \
    -g none 2>/dev/null | grep -v '^#' | grep -v '^$' \
    | sed 's/  *$//' | cut -c1-160 >"$out/$name.children.txt" || true
  echo "== $name: top $top by self time (perf report --no-children; $data)"
  head -n "$top" "$out/$name.self.txt"
  echo "== $name: top $top by inclusive time (perf report --children)"
  head -n "$top" "$out/$name.children.txt"
  echo
}

# record NAME COMMAND...: perf record of one command.
record() {
  local name=$1; shift
  perf record -e cpu-clock -F 2999 -g -o "$out/$name.perf.data" -- "$@" >"$out/$name.stdout" \
    2>"$out/$name.stderr" || { echo "profile.sh: $name failed:"; cat "$out/$name.stderr"; exit 1; } >&2
}

# logbench's producer threads and AsyncLogging's backend: the timed part,
# without the main thread's warm-up and read-back.
producers=logbench-prod,muon-logging

if [ "$what" = logging ] || [ "$what" = all ]; then
  record logging-1thread "$bin/logbench" --threads 1 --messages 5000000
  report logging-1thread "$producers"
  record logging-16threads "$bin/logbench" --threads 16 --messages 5000000
  report logging-16threads "$producers"
fi

if [ "$what" = pingpong ] || [ "$what" = all ]; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/profile.XXXXXX")
  server_pid=
  cleanup() {
    if [ -n "$server_pid" ]; then kill -INT "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
  }
  trap cleanup EXIT
  # perf stops (and writes its data) when the server exits on SIGINT.
  perf record -e cpu-clock -F 2999 -g -o "$out/pingpong-server.perf.data" -- \
    "$bin/pingpong_server" 127.0.0.1 0 1 >"$tmp/server.out" 2>"$tmp/server.err" &
  server_pid=$!
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$tmp/server.out" 2>/dev/null || true)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "profile.sh: pingpong_server did not report a port" >&2; exit 1; }
  "$bin/pingpong_client" 127.0.0.1 "$port" 1 16384 10 5 >"$out/pingpong-client.stdout"
  kill -INT "$server_pid"
  wait "$server_pid" || true
  server_pid=
  report pingpong-server
fi
