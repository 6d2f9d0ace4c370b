#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
# What README promises to a project that uses muon: `cmake --install` gives
# headers, libraries and a CMake package; examples/hello, a project of its
# own, finds it with find_package(muon), builds, runs, and its lines land in
# the log file in muduo's format; muon's internal headers are installed only
# under muon/base/internal/. The same programs build without CMake,
# with `g++ ... $(pkg-config --cflags --libs muon)` from the installed muon.pc
# alone (the libraries are static: the .pc must list what they link to);
# every installed library has a .pc of its own whose Requires resolve, and
# README's shipper example (examples/hello/hello_ship.cc) builds with the
# g++ command README gives, `pkg-config --cflags --libs muon-ship` alone, and
# ships its lines (tests/net/relp/HelloShip_test.cc runs it). When
# the build has the muduo bridge, a muduo-style program builds against
# muon::muduo_compat from the package, and with the g++ command docs/book.md
# documents, run as written there, and runs.
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/muon/base/Logging.h"
test -f "$work/prefix/include/muon/net/TcpServer.h"
test -f "$work/prefix/include/muon/net/http/HttpServer.h"
# muon's internal headers only under internal/ (docs/architecture.md): no
# user's #include can reach them by their old names.
for h in RecordQueue.h LoggerConfig.h BufferStore.h Statement.h RecordFormatter.h SpoolFormat.h; do
  test ! -e "$work/prefix/include/muon/base/$h" || { echo "installed outside internal/: $h" >&2; exit 1; }
  test -f "$work/prefix/include/muon/base/internal/$h" || { echo "not installed: internal/$h" >&2; exit 1; }
done
cmake -S "$src/examples/hello" -B "$work/hello" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/hello" --parallel "$(nproc)" >/dev/null

# run_hello DIR: runs DIR/hello in a folder of its own and checks its log
# file, then DIR/hello_net (muon::net: a server and a client in one loop, one
# echo).
run_hello() {
  local dir=$1 logs line reply
  rm -rf "$dir/run" && mkdir "$dir/run"
  (cd "$dir/run" && "$dir/hello")
  shopt -s nullglob
  logs=("$dir"/run/hello.*.log)
  shopt -u nullglob
  [ ${#logs[@]} -eq 1 ] || { echo "expected one hello.*.log, found: ${logs[*]:-none}" >&2; exit 1; }
  cat "${logs[0]}"
  line='^[0-9]{8} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z? +[0-9]+ INFO  hello 42 pi=3\.142 - hello\.cc:[0-9]+$'
  grep -Eq "$line" "${logs[0]}" || { echo "no INFO line in the expected format" >&2; exit 1; }
  grep -Eq ' WARN  disk at 93\.5% mount=/var - hello\.cc:[0-9]+$' "${logs[0]}" || { echo "no WARN line" >&2; exit 1; }
  reply=$(timeout 20 "$dir/hello_net") || { echo "$dir/hello_net failed" >&2; exit 1; }
  echo "$reply"
  grep -qx "echoed: ping" <<<"$reply" || { echo "hello_net: no 'echoed: ping' line" >&2; exit 1; }
}
run_hello "$work/hello"

# Without CMake: pkg-config and muon.pc from the installed tree alone.
pcfile=$(find "$work/prefix" -name muon.pc)
[ -n "$pcfile" ] || { echo "no muon.pc installed" >&2; exit 1; }
export PKG_CONFIG_PATH=${pcfile%/muon.pc}
# One .pc per installed library (libmuon_X.a: a .pc with -lmuon_X in its
# Libs), and each one's Requires resolve.
for lib in "$(dirname "$PKG_CONFIG_PATH")"/libmuon_*.a "$(dirname "$PKG_CONFIG_PATH")"/libmuon_*.so; do
  [ -e "$lib" ] || continue
  name=${lib##*/lib}
  name=${name%.*}
  grep -q -- "^Libs:.* -l$name\( \|$\)" "$PKG_CONFIG_PATH"/*.pc \
    || { echo "${lib##*/} is installed without a .pc that links it" >&2; exit 1; }
done
for pc in "$PKG_CONFIG_PATH"/*.pc; do
  pkg=${pc##*/}
  pkg-config --print-errors --exists "${pkg%.pc}" || { echo "$pkg does not resolve" >&2; exit 1; }
done
mkdir -p "$work/hello_pc"
# The two builds side by side (most of this test's time is compiling).
builds=()
for prog in hello hello_net; do
  # shellcheck disable=SC2046  # pkg-config's output is a list of flags
  g++ -std=c++17 -O2 "$src/examples/hello/$prog.cc" -o "$work/hello_pc/$prog" \
    $(pkg-config --cflags --libs muon) &
  builds+=("$prog:$!")
done
for b in "${builds[@]}"; do
  wait "${b#*:}" || { echo "${b%%:*}: the pkg-config build failed" >&2; exit 1; }
done
run_hello "$work/hello_pc"
# README's shipper example, with README's command (hello_ship.cc's path in
# place of its name), where muon was built with muon::ship.
if [ -e "$PKG_CONFIG_PATH/muon-ship.pc" ]; then
  test -x "$work/hello/hello_ship"  # the CMake package's muon::ship, too
  command=$(grep -m1 '^g++ .*pkg-config --cflags --libs muon-ship)$' "$src/README.md") \
    || { echo "README.md: no g++ command for muon-ship" >&2; exit 1; }
  mkdir -p "$work/ship_pc"
  (cd "$work/ship_pc" && eval "${command/hello_ship.cc/$src/examples/hello/hello_ship.cc}") \
    || { echo "README's command failed: $command" >&2; exit 1; }
  # It runs, and ships (against a real rsyslogd; the test skips without one).
  if [ -x "$build/bin/HelloShip_test" ]; then
    MUON_HELLO_SHIP=$work/ship_pc/hello_ship "$build/bin/HelloShip_test" \
      || { echo "hello_ship built with pkg-config alone failed" >&2; exit 1; }
  fi
fi
# The muduo bridge from the package, if this build has it.
if grep -q '^MUON_BUILD_MUDUO_COMPAT:BOOL=ON$' "$build/CMakeCache.txt"; then
  test -f "$work/prefix/include/muon/muduo_compat/muduo/net/TcpServer.h"
  test ! -e "$work/prefix/include/muduo"  # a real muduo's place stays free
  sources="$src/tests/muduo_compat/muduo_net_test.cc;$src/tests/muduo_compat/TcpServer_alone.cc"
  sources+=";$src/tests/muduo_compat/TcpClient_alone.cc"
  cmake -S "$src/tests/install/muduo_compat" -B "$work/muduo_style" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DMUDUO_STYLE_SOURCES="$sources" \
    -DMUDUO_HTTP_SOURCE="$src/tests/muduo_compat/muduo_http_test.cc" >/dev/null
  cmake --build "$work/muduo_style" --parallel "$(nproc)" >/dev/null
  timeout 30 "$work/muduo_style/muduo_net_test" || { echo "muduo-style program failed" >&2; exit 1; }
  timeout 30 "$work/muduo_style/muduo_http_test" >/dev/null \
    || { echo "muduo's HttpServer example failed" >&2; exit 1; }
  # docs/book.md's command for a build without CMake, run as written there
  # with the program's sources in place of my_muduo_program.cc.
  command=$(grep -m1 '^g++ .*pkg-config --cflags --libs muon-muduo-compat' "$src/docs/book.md") \
    || { echo "docs/book.md: no g++ command for the bridge" >&2; exit 1; }
  command=${command/my_muduo_program.cc/${sources//;/ }}
  mkdir -p "$work/muduo_pc"
  (cd "$work/muduo_pc" && eval "$command") || { echo "docs/book.md's command failed: $command" >&2; exit 1; }
  timeout 30 "$work/muduo_pc/my_muduo_program" || { echo "muduo-style program (g++) failed" >&2; exit 1; }
  # The same command builds muduo's HttpServer example (muon::http comes
  # through muon-muduo-compat.pc's Requires).
  command=${command/${sources//;/ }/$src/tests/muduo_compat/muduo_http_test.cc}
  command=${command/-o my_muduo_program/-o my_muduo_http_program}
  (cd "$work/muduo_pc" && eval "$command") || { echo "the bridge's g++ command failed: $command" >&2; exit 1; }
  timeout 30 "$work/muduo_pc/my_muduo_http_program" >/dev/null \
    || { echo "muduo's HttpServer example (g++) failed" >&2; exit 1; }
fi
echo "install_test: ok"
