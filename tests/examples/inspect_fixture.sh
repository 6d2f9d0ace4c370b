# shellcheck shell=bash disable=SC2154  # bin is the caller's
# inspect_fixture.sh: sourced by the test scripts that run inspect_server
# (examples/inspect) and a private Prometheus scraping it
# (tests/examples/inspect_test.sh, tests/docs/docs_test.sh). The caller sets
# `bin` (the build's bin/) first. This file sets `work`, a temporary
# directory, and `pids`: every process started here (or appended by the
# caller) is in a process group of its own, and on exit those groups are
# killed and `work` removed. fail MESSAGE: exit 1; skip MESSAGE: exit 77,
# or fail when MUON_REQUIRE_ALL or CI is set.
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
  if [ -n "${MUON_REQUIRE_ALL:-}" ] || [ -n "${CI:-}" ]; then fail "$* (required: MUON_REQUIRE_ALL or CI is set)"; fi
  echo "SKIP: $*"
  exit 77
}

# start_inspect_server NAME ARGS...: inspect_server, logging into $work;
# sets server_pid and port (the inspector's).
start_inspect_server() {
  local out=$work/$1.out
  shift
  setsid "$bin/inspect_server" --log-dir "$work" "$@" >"$out" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  port=
  for _ in $(seq 1 500); do
    port=$(sed -n 's/^inspector on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$out" | head -1)
    [ -n "$port" ] && return
    kill -0 "$server_pid" 2>/dev/null || { cat "$out" >&2; fail "inspect_server exited at start"; }
    sleep 0.01
  done
  fail "inspect_server printed no 'inspector on' line"
}

# start_prometheus CONFIG: Prometheus with the configuration file CONFIG and
# its storage in $work, on a free loopback port; sets prom (its pid) and
# pport (its port). Skips when prometheus is not installed.
start_prometheus() {
  local config=$1
  command -v prometheus >/dev/null || skip "prometheus is not installed (./build.sh installs it for the tests)"
  # A random port nothing listens on; should another process take it
  # first, Prometheus exits and the next is tried.
  for _ in 1 2 3 4 5; do
    pport=$((20000 + RANDOM % 30000))
    if (exec 3<>"/dev/tcp/127.0.0.1/$pport") 2>/dev/null; then continue; fi
    rm -rf "$work/tsdb"
    setsid prometheus --config.file="$config" --storage.tsdb.path="$work/tsdb" \
      --web.listen-address="127.0.0.1:$pport" >"$work/prometheus.log" 2>&1 &
    prom=$!
    pids+=("$prom")
    # Listening, or gone (the port was taken after all).
    for _ in $(seq 1 300); do
      grep -q 'Server is ready to receive web requests' "$work/prometheus.log" && break
      kill -0 "$prom" 2>/dev/null || break
      sleep 0.05
    done
    kill -0 "$prom" 2>/dev/null && return
  done
  tail -20 "$work/prometheus.log" >&2
  fail "prometheus did not start"
}

# wait_metric_moves METRIC SECONDS: waits until Prometheus has seen METRIC
# grow between two scrapes (so it holds at least two samples of it); fails
# after SECONDS.
wait_metric_moves() {
  local metric=$1 limit=$2 first='' value=''
  local api="http://127.0.0.1:$pport/api/v1/query?query=$metric"
  local deadline=$((SECONDS + limit))
  while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$prom" 2>/dev/null || { tail -20 "$work/prometheus.log" >&2; fail "prometheus exited"; }
    # {"status":"success","data":{...,"result":[{"metric":{...},"value":[1700000000.123,"4856"]}]}}
    value=$(curl -sS --max-time 5 "$api" 2>/dev/null | sed -n 's/.*"value":\[[0-9.]*,"\([0-9.e+]*\)"\].*/\1/p') || value=
    if [ -n "$value" ]; then
      [ -n "$first" ] || first=$value
      if awk -v a="$value" -v b="$first" 'BEGIN { exit !(a + 0 > b + 0) }'; then
        echo "prometheus saw $metric go from $first to $value"
        return
      fi
    fi
    sleep 0.2
  done
  tail -20 "$work/prometheus.log" >&2
  fail "$metric did not move in Prometheus (first '$first', last '$value')"
}
