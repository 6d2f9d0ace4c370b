#!/usr/bin/env bash
# Quill's and fmtlog's calling-thread instructions for log_instructions'
# two peer rows (rowIntIntDoubleDeferred, rowHelloWorldDeferred), counted the
# same way: a noipa function holding one statement, 100,000 calls, g++ -O2,
# callgrind --toggle-collect, total / 100,000. Their sources are not in this
# repository and nothing is downloaded: pass their checkouts.
set -euo pipefail

usage() {
  cat <<'USAGE'
peers_instructions.sh QUILL_INCLUDE FMTLOG_DIR FMT_INCLUDE [BUILD_DIR]
  QUILL_INCLUDE  Quill's include/ (header-only; measured with v12.1.0)
  FMTLOG_DIR     a fmtlog checkout (fmtlog.h, fmtlog-inl.h)
  FMT_INCLUDE    {fmt}'s include/ of the version fmtlog builds with (11.1.3)
  BUILD_DIR      muon's build, for log_instructions' own two rows (default: build)
Prints one line per row: name and instructions per call.
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
[ $# -ge 3 ] || { usage >&2; exit 2; }
quill=$1 fmtlog=$2 fmt=$3 build=${4:-build}
for d in "$quill/quill" "$fmt/fmt"; do
  [ -d "$d" ] || { echo "peers_instructions.sh: no $d" >&2; exit 2; }
done
[ -f "$fmtlog/fmtlog.h" ] || { echo "peers_instructions.sh: no $fmtlog/fmtlog.h" >&2; exit 2; }
[ -x "$build/bin/log_instructions" ] || { echo "peers_instructions.sh: build $build/bin/log_instructions first" >&2; exit 2; }

here=$(cd "$(dirname "$0")/../logbench/peers" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -std=c++17 -O2 -I"$quill" "$here/quill_rows.cc" -o "$work/quill_rows" -lpthread
g++ -std=c++17 -O2 -DFMT_HEADER_ONLY -I"$fmt" -I"$fmtlog" "$here/fmtlog_rows.cc" \
  -o "$work/fmtlog_rows" -lpthread

count() {  # PROGRAM FUNCTION-PATTERN NAME
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" --toggle-collect="$2" "$1" \
    > /dev/null 2>&1
  awk -v name="$3" '/^totals:/ { printf "%s %.1f\n", name, $2 / 100000 }' "$work/cg"
}
count "$build/bin/log_instructions" '*::rowIntIntDoubleDeferred(*' muon-int-int-double
count "$build/bin/log_instructions" '*::rowHelloWorldDeferred(*' muon-hello-world
count "$work/quill_rows" 'quillIntIntDouble*' quill-int-int-double
count "$work/quill_rows" 'quillHelloWorld*' quill-hello-world
count "$work/fmtlog_rows" 'fmtlogIntIntDouble*' fmtlog-int-int-double
count "$work/fmtlog_rows" 'fmtlogHelloWorld*' fmtlog-hello-world
