#!/usr/bin/env bash
# docs_test.sh SOURCE_DIR BUILD_DIR [FIXTURE]
# Runs the shell commands README.md and docs/*.md show, as written, so that
# a command that fails as a user types it fails the tests. A fenced block is
# run when its info string marks it (docs/reliability.md, "The docs'
# commands"):
#   ```sh runnable               run as is
#   ```sh runnable prometheus    run beside a Prometheus that scrapes
#                                inspect_server with the configuration of
#                                examples/inspect/prometheus.yml; the block
#                                reaches it at 127.0.0.1:9090 (Prometheus's
#                                default) and must print a query answer whose
#                                values are numbers
# Without FIXTURE the plain blocks run, with it those marked with it.
# Each block runs with `bash -e -o pipefail` in a temporary directory that
# holds the source tree's files (links) and `build`, a link to BUILD_DIR;
# BUILD_DIR/bin is first in PATH. A block gets 30 s; whatever it left
# running is killed when it ends. A block that fails is reported with its
# file, line and output. The fixture's servers listen on free loopback
# ports: the addresses the docs give (127.0.0.1:9090, and 127.0.0.1:9101 in
# the configuration) are changed to those before the block runs.
# Prometheus missing: skipped (77), or failed under CI / MUON_REQUIRE_ALL.
set -euo pipefail
src=$1 build=$2 fixture=${3:-}
bin=$build/bin
kFixtures=" prometheus "
kBlockSeconds=30
# shellcheck source=tests/examples/inspect_fixture.sh
. "$src/tests/examples/inspect_fixture.sh"

# The marked blocks: $work/blocks/N.sh, and one line "N FILE LINE FIXTURE"
# each in $work/blocks/list (LINE: the opening fence's).
mkdir "$work/blocks"
# A fence closes at a line of at least its own backticks, so a block shown
# inside a longer fence (as docs/reliability.md shows the marker) is text.
(cd "$src" && awk -v dir="$work/blocks" '
  FNR == 1 { fence = ""; out = "" }
  fence != "" {
    if ($0 ~ ("^" fence "`*[[:space:]]*$")) {
      fence = ""
      if (out != "") { close(out); out = "" }
    } else if (out != "") {
      print > out
    }
    next
  }
  match($0, /^```+/) {
    fence = substr($0, 1, RLENGTH)
    n = split(substr($0, RLENGTH + 1), word, /[[:space:]]+/)
    if (word[1] == "sh" && word[2] == "runnable") {
      if (n > 3) { print FILENAME ":" FNR ": more than one fixture: " $0 > "/dev/stderr"; exit 1 }
      ++blocks
      out = dir "/" blocks ".sh"
      printf "" > out
      print blocks, FILENAME, FNR, (n == 3 ? word[3] : "-") > (dir "/list")
    }
  }' README.md docs/*.md)
touch "$work/blocks/list"
while read -r _ file line mark; do
  [ "$mark" = - ] || [[ "$kFixtures" == *" $mark "* ]] || fail "$file:$line: unknown fixture '$mark' (known:$kFixtures)"
done <"$work/blocks/list"

# The directory a block runs in: the source tree's entries, and `build`.
mkdir "$work/tree"
for entry in "$src"/* "$src"/.[!.]*; do
  [ -e "$entry" ] || continue
  name=${entry##*/}
  case $name in build | .git) continue ;; esac
  ln -s "$entry" "$work/tree/$name"
done
ln -s "$build" "$work/tree/build"

# run_block N FILE LINE: runs block N in a copy of the tree (the links);
# its output in $work/out.N. Fails with the file, line and output.
run_block() {
  local n=$1 file=$2 line=$3 status=0 group
  local dir=$work/run.$n out=$work/out.$n
  cp -a "$work/tree" "$dir"
  # bash writes its pid (its process group's, setsid made it the leader)
  # before it runs the block, so that what the block left running can be
  # killed.
  # shellcheck disable=SC2016  # $$ and $1-$3 are the inner bash's
  PATH="$bin:$PATH" timeout -s KILL "$kBlockSeconds" \
    setsid bash -c 'echo $$ >"$1"; cd "$2" && exec bash -e -o pipefail "$3"' \
    _ "$work/group.$n" "$dir" "$work/blocks/$n.sh" >"$out" 2>&1 </dev/null || status=$?
  group=$(cat "$work/group.$n" 2>/dev/null || true)
  [ -z "$group" ] || kill -9 -- "-$group" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    {
      echo "FAIL: $file:$line: the block exited with status $status$([ "$status" -eq 137 ] && echo " (killed after ${kBlockSeconds} s)"):"
      sed 's/^/  | /' "$work/blocks/$n.sh"
      echo "its output:"
      sed 's/^/  > /' "$out"
    } >&2
    exit 1
  fi
  echo "ok: $file:$line"
}

# The fixture `prometheus`: inspect_server, and Prometheus with the
# example configuration scraping it, both on free ports; returns once
# Prometheus holds two samples (so rate() over them has a value).
prometheus_fixture() {
  command -v curl >/dev/null || skip "curl is not installed (./build.sh installs it)"
  start_inspect_server docs
  local config=$src/examples/inspect/prometheus.yml
  grep -q "127\.0\.0\.1:9101" "$config" || fail "$config does not scrape 127.0.0.1:9101 (docs/net.md's address)"
  sed "s/127\.0\.0\.1:9101/127.0.0.1:$port/" "$config" >"$work/prometheus.yml"
  start_prometheus "$work/prometheus.yml"
  # Two scrapes at the configuration's interval (5 s), after a start of a
  # few seconds; 45 s is room for a loaded machine.
  wait_metric_moves muon_log_lines_written_total 45
}

# A Prometheus query's answer whose every value is a number:
# {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[1700000000.1,"16.4"]}]}}
is_number_answer() {
  local answer=$1 values
  grep -q '"status":"success"' <<<"$answer" || return 1
  values=$(grep -o '"value":\[[^]]*\]' <<<"$answer") || return 1
  ! grep -Evq '^"value":\[[0-9]+(\.[0-9]+)?,"-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?"\]$' <<<"$values"
}

ran=0
case $fixture in
  "")
    while read -r n file line mark; do
      [ "$mark" = - ] || continue
      run_block "$n" "$file" "$line"
      ran=$((ran + 1))
    done <"$work/blocks/list"
    ;;
  prometheus)
    grep -q ' prometheus$' "$work/blocks/list" || fail "no block is marked 'sh runnable prometheus'"
    prometheus_fixture
    while read -r n file line mark; do
      [ "$mark" = prometheus ] || continue
      grep -q '127\.0\.0\.1:9090' "$work/blocks/$n.sh" || fail "$file:$line: the block does not query 127.0.0.1:9090"
      sed -i "s/127\.0\.0\.1:9090/127.0.0.1:$pport/g" "$work/blocks/$n.sh"
      run_block "$n" "$file" "$line"
      is_number_answer "$(cat "$work/out.$n")" \
        || fail "$file:$line: the answer is not a number: $(cat "$work/out.$n")"
      echo "  answer: $(cat "$work/out.$n")"
      ran=$((ran + 1))
    done <"$work/blocks/list"
    ;;
  *) fail "unknown fixture '$fixture' (known:$kFixtures)" ;;
esac
[ "$ran" -gt 0 ] || fail "no runnable block in README.md and docs/*.md"
echo "docs_test: $ran block(s) ran as written"
