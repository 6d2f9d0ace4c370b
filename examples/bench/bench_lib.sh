# shellcheck shell=bash disable=SC2034,SC2154  # sourced: the scripts set bench_name and use what this sets
# Helpers shared by the benchmark scripts in examples/bench/. Sourced, not run:
#   bench_name=logging_bench   # the name in messages
#   synopsis() { cat <<'EOF' ... EOF; }   # the command line, one or two lines
#   help_text() { ... }                   # the full help (synopsis first)
#   . "$here/bench_lib.sh"
# The usage text lives in those heredocs, never in the file's comments, so
# editing a comment cannot change what --help prints.

die() { echo "$bench_name: $*" >&2; exit 1; }

# usage: a wrong command line; the synopsis to stderr, exit 2.
usage() { synopsis >&2; exit 2; }

# need_value ARGC: call with $# before reading an option's value ($2).
need_value() { [ "$1" -ge 2 ] || usage; }

# take_build_dir ARG: the first argument is BUILD_DIR (or -h/--help, which
# prints the help and exits 0). Sets $build to its absolute path.
take_build_dir() {
  case "${1:-}" in
    -h|--help) help_text; exit 0 ;;
    ''|-*) usage ;;
  esac
  [ -d "$1" ] || die "no build directory '$1'"
  build=$(cd "$1" && pwd)
}

# want_count OPTION VALUE [MAX]: VALUE must be a whole number from 1 (to MAX).
want_count() {
  local option=$1 value=$2 max=${3:-}
  if [[ $value =~ ^[1-9][0-9]*$ ]] && { [ -z "$max" ] || [ "$value" -le "$max" ]; }; then
    return 0
  fi
  die "$option wants a whole number from 1${max:+ to $max}, not '$value'"
}

# take_bench_lock: /tmp/muon-bench.lock (MUON_BENCH_LOCK=FILE: that file
# instead, for a smoke run that must not wait for the machine, never for
# figures), exclusively, until the script ends, so that no build or other
# benchmark shares the machine meanwhile. An outer `flock FILE ...` passes
# its descriptor down: the lock is taken through that one (the same open
# file, so no wait on ourselves); otherwise the script opens its own and
# waits for it.
take_bench_lock() {
  local lock=${MUON_BENCH_LOCK:-/tmp/muon-bench.lock} fd
  bench_lock_fd=
  for fd in /proc/$$/fd/*; do
    if [ "$(readlink "$fd" 2>/dev/null)" = "$lock" ]; then bench_lock_fd=${fd##*/}; break; fi
  done
  if [ -z "$bench_lock_fd" ]; then
    exec {bench_lock_fd}>>"$lock"
  fi
  if ! flock -x -n "$bench_lock_fd"; then
    echo "$bench_name: waiting for $lock (a build or another benchmark holds it)" >&2
    flock -x "$bench_lock_fd"
  fi
}

# raise_fd_limit WHAT N...: the soft descriptor limit up to the hard one, for
# the largest N of WHAT (sessions, connections) each side opens one
# descriptor for; warns when the hard limit is too low for it.
raise_fd_limit() {
  local what=$1 most=0 n hard
  shift
  for n in "$@"; do [ "$n" -gt "$most" ] && most=$n; done
  hard=$(ulimit -Hn)
  if [ "$hard" != unlimited ] && [ "$hard" -lt $((most + 64)) ]; then
    echo "$bench_name: warning: the fd hard limit is $hard, too low for $most $what" >&2
  fi
  ulimit -n "$hard" 2>/dev/null || true
}

# hms SECONDS: "42s" or "3m07s".
hms() {
  awk -v s="$1" 'BEGIN { s = int(s + 0.5); if (s >= 60) printf "%dm%02ds", s / 60, s % 60; else printf "%ds", s }'
}

# median_fmt FORMAT: the median of the numbers on stdin, printed with FORMAT
# (nothing when there are none).
median_fmt() {
  sort -g | awk -v fmt="$1" '{ v[NR] = $1 } END {
    if (NR == 0) exit
    if (NR % 2) printf fmt, v[(NR + 1) / 2]; else printf fmt, (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# CSV files here have a header line naming the columns; programs address a
# column by its name, never by its number.
#
# join_csv WORD...: the words joined by commas (a header line from a list).
join_csv() { local IFS=,; echo "$*"; }
#
# csv_header: awk text to put first in a program reading such a file (-F,):
# it maps each name to its column in col[] and skips the header line, so the
# program reads a field as $col["msg_per_s"].
csv_header='NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }'
#
# csv_emit: an awk function emit(v) that prints the row whose fields are
# v["name"], in the order of the comma-separated names in the awk variable
# `columns` (pass -v columns="$(join_csv "${names[@]}")"); missing ones are
# empty.
csv_emit='function emit(v,   n, names, i, line) {
  n = split(columns, names, ",")
  for (i = 1; i <= n; i++) line = line (i > 1 ? "," : "") v[names[i]]
  print line
}'

# plot_lines PREFIX NAME:COLOUR...: a gnuplot `plot` command with one line per
# data file PREFIX.NAME.dat that exists (columns x y), each in its colour and
# titled NAME; "plot 1/0 notitle" when there is none, so the panel is drawn empty.
plot_lines() {
  local prefix=$1 sep="" entry name colour f
  shift
  printf 'plot '
  for entry in "$@"; do
    name=${entry%%:*}
    colour=${entry#*:}
    f=$prefix.$name.dat
    [ -e "$f" ] || continue
    printf '%s"%s" using 1:2 with linespoints lw 2 pt 7 lc rgb "%s" title "%s"' \
      "$sep" "$f" "$colour" "$name"
    sep=", "
  done
  if [ -z "$sep" ]; then printf '1/0 notitle'; fi
  printf '\n'
}

# latency_medians CSV...: log_latency's --csv files (or the peers' latency
# programs', the same columns) made into one: for each cell (logger,
# message, threads), in the rows' order of the first file, the median across
# the files of each percentile (the mean of the middle two for an even
# count), and `runs`, the files behind it. No file: the header alone.
latency_medians() {
  local percentiles=(p50 p90 p99 p99_9 p99_99 max)
  local columns=(logger message threads "${percentiles[@]}" runs)
  if [ $# -eq 0 ]; then join_csv "${columns[@]}"; return; fi
  awk -F, -v columns="$(join_csv "${columns[@]}")" -v pcts="${percentiles[*]}" "$csv_emit"'
    FNR == 1 { delete col; for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
      k = $col["logger"] SUBSEP $col["message"] SUBSEP $col["threads"]
      if (!(k in n)) { order[++cells] = k; name[k, "logger"] = $col["logger"]
                       name[k, "message"] = $col["message"]; name[k, "threads"] = $col["threads"] }
      n[k]++
      np = split(pcts, p, " ")
      for (i = 1; i <= np; i++) val[k, p[i], n[k]] = $col[p[i]] + 0
    }
    function median(k, what,   m, a, i, j, x) {
      m = n[k]
      for (i = 1; i <= m; i++) a[i] = val[k, what, i]
      for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return m % 2 ? a[(m + 1) / 2] : sprintf("%.0f", (a[m / 2] + a[m / 2 + 1]) / 2)
    }
    BEGIN { print columns }
    END {
      np = split(pcts, p, " ")
      for (c = 1; c <= cells; c++) {
        k = order[c]
        delete v
        v["logger"] = name[k, "logger"]; v["message"] = name[k, "message"]; v["threads"] = name[k, "threads"]
        for (i = 1; i <= np; i++) v[p[i]] = median(k, p[i])
        v["runs"] = n[k]
        emit(v)
      }
    }' "$@"
}
