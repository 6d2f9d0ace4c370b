#!/usr/bin/env bash
# inspect_test.sh BIN_DIR pages|prometheus
# inspect_server (examples/inspect) as an operator meets it, over curl:
#   pages       --help answers with the usage on stdout and status 0; every
#               page answers 200 with its content; a request path is
#               never read as a file; PUT /log/level is 403 without
#               --allow-write (which the answer names), 401 with a missing
#               or wrong token (saying which), a warning for a token
#               without --allow-write, 200 with
#               the right one and the levels applied at once, 400 with the
#               reason for bad syntax; the server stops on SIGTERM.
#   prometheus  a real Prometheus (Debian's `prometheus`), with its own
#               configuration and storage in a temporary directory, scrapes
#               /metrics every second; its HTTP API must see
#               muon_log_lines_written_total move. Skipped (77) when
#               prometheus is not installed, unless MUON_REQUIRE_ALL or CI is
#               set (then it fails).
# Every process started here is in a process group of its own, killed on exit
# (tests/examples/inspect_fixture.sh starts them).
set -euo pipefail
bin=$1 mode=$2
# shellcheck source=tests/examples/inspect_fixture.sh
. "$(dirname "$0")/inspect_fixture.sh"
command -v curl >/dev/null || skip "curl is not installed (./build.sh installs it)"

# code METHOD PATH [CURL ARGS...]: the status; the body in $work/body.
code() {
  local method=$1 path=$2
  shift 2
  curl -sS --max-time 10 -X "$method" -o "$work/body" -w '%{http_code}' "$@" "http://127.0.0.1:$port$path"
}

pages() {
  # Bad command lines: usage on stderr, status 2.
  for args in "--port" "--port abc" "--port 70000" "--token" "--token ''" "extra"; do
    local status=0
    eval "\"\$bin/inspect_server\" $args" >/dev/null 2>"$work/usage" || status=$?
    [ "$status" -eq 2 ] && grep -q '^usage: ' "$work/usage" || fail "'inspect_server $args' gave status $status"
  done
  # --help: the usage on stdout (saying where the log goes), status 0.
  "$bin/inspect_server" --help >"$work/help" 2>"$work/usage" || fail "'inspect_server --help' gave status $?"
  grep -q '^usage: ' "$work/help" && grep -q -- '--log-dir' "$work/help" && [ ! -s "$work/usage" ] \
    || fail "'inspect_server --help': $(cat "$work/help" "$work/usage")"
  start_inspect_server ro
  for page in /proc/overview /proc/status /proc/opened_files /proc/threads \
              /sys/overview /sys/loadavg /sys/meminfo /sys/stat /log/level /log/stats /metrics /; do
    [ "$(code GET "$page")" = 200 ] || fail "GET $page answered $(cat "$work/body")"
    [ -s "$work/body" ] || fail "GET $page is empty"
  done
  code GET /proc/overview >/dev/null; grep -q "^pid: $server_pid$" "$work/body" || fail "/proc/overview: $(cat "$work/body")"
  code GET /proc/threads >/dev/null; grep -q ' muon-logging$' "$work/body" || fail "/proc/threads: $(cat "$work/body")"
  code GET /proc/status >/dev/null; grep -q "^Pid:[[:space:]]*$server_pid$" "$work/body" || fail "/proc/status"
  code GET /sys/meminfo >/dev/null; grep -q '^MemTotal:' "$work/body" || fail "/sys/meminfo"
  code GET /proc/opened_files >/dev/null; grep -q ' -> socket:' "$work/body" || fail "/proc/opened_files"
  code GET /log/stats >/dev/null; grep -q '^main lines_written [0-9]' "$work/body" || fail "/log/stats"
  code GET /metrics >/dev/null; grep -q '^muon_net_bytes_received_total{' "$work/body" || fail "/metrics"
  # A path is a page name, never a file.
  for path in /proc/../../etc/passwd /etc/passwd /proc/self/environ /sys/../proc/self/status; do
    [ "$(code GET "$path" --path-as-is)" = 404 ] || fail "GET $path answered $(head -c 200 "$work/body")"
  done
  [ "$(code POST /metrics -d x)" = 405 ] || fail "POST /metrics"
  [ "$(code PUT /log/level -d debug)" = 403 ] || fail "PUT without --allow-write"
  grep -q -- '--allow-write' "$work/body" || fail "the 403 does not name --allow-write: $(cat "$work/body")"
  code GET /log/level >/dev/null; [ "$(head -1 "$work/body")" = info ] || fail "the level changed: $(cat "$work/body")"
  kill -TERM "$server_pid"
  timeout 10 tail --pid="$server_pid" -f /dev/null || fail "inspect_server did not stop on SIGTERM"
  local status=0
  wait "$server_pid" || status=$?
  [ "$status" -eq 0 ] || fail "inspect_server exited with $status after SIGTERM"

  # A token without --allow-write guards nothing: a warning.
  start_inspect_server tokenonly --token s3cret
  grep -q 'warning: --token without --allow-write' "$work/tokenonly.out" \
    || fail "no warning for --token without --allow-write: $(cat "$work/tokenonly.out")"
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "inspect_server exited with $? after SIGTERM"

  start_inspect_server rw --allow-write --token s3cret
  [ "$(code PUT /log/level -d debug)" = 401 ] || fail "PUT without a token"
  grep -q 'a bearer token is required' "$work/body" || fail "401 without a token: $(cat "$work/body")"
  [ "$(code PUT /log/level -d debug -H 'Authorization: Bearer s3cre')" = 401 ] || fail "PUT with a wrong token"
  grep -q 'the bearer token is wrong' "$work/body" || fail "401 with a wrong token: $(cat "$work/body")"
  [ "$(code PUT /log/level -d debug -H 'Authorization: Bearer s3cretX')" = 401 ] || fail "PUT with a longer token"
  [ "$(code PUT /log/level -d 'debug,Inspector=trace' -H 'Authorization: Bearer s3cret')" = 200 ] \
    || fail "PUT with the right token: $(cat "$work/body")"
  [ "$(head -1 "$work/body")" = 'debug,Inspector=trace' ] || fail "PUT answered $(cat "$work/body")"
  code GET /log/level >/dev/null
  grep -qx 'default debug' "$work/body" && grep -qx 'module Inspector trace' "$work/body" \
    || fail "GET after PUT: $(cat "$work/body")"
  # At once: DEBUG lines (the connections' own) now reach the server's log.
  for _ in $(seq 1 500); do
    code GET /sys/loadavg >/dev/null
    grep -q ' DEBUG ' "$work"/inspect_server.*.log 2>/dev/null && break
    sleep 0.01
  done
  grep -q ' DEBUG ' "$work"/inspect_server.*.log || fail "no DEBUG line in the log after the PUT"
  [ "$(code PUT /log/level -d 'info,=x' -H 'Authorization: Bearer s3cret')" = 400 ] || fail "bad syntax"
  [ -s "$work/body" ] || fail "a 400 without a reason"
  echo "400 reason: $(cat "$work/body")"
  code GET /log/level >/dev/null; [ "$(head -1 "$work/body")" = 'debug,Inspector=trace' ] || fail "bad PUT changed the levels"
  echo "inspect pages: ok"
}

prometheus_scrapes() {
  start_inspect_server metrics
  cat >"$work/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: inspect_server
    static_configs:
      - targets: ['127.0.0.1:$port']
CONF
  start_prometheus "$work/prometheus.yml"
  # Prometheus needs a few seconds to start and two scrapes (1 s apart) for
  # the value to move; 60 s is room for a loaded machine.
  wait_metric_moves muon_log_lines_written_total 60
  # The scrape itself was healthy.
  curl -sS "http://127.0.0.1:$pport/api/v1/query?query=up" | grep -q '"value":\[[0-9.]*,"1"\]' \
    || fail "up is not 1"
}

case $mode in
  pages) pages ;;
  prometheus) prometheus_scrapes ;;
  *) fail "unknown mode $mode" ;;
esac
