#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
# What README promises to a project that uses muon: `cmake --install` gives
# headers, libraries and a CMake package; examples/hello, a project of its
# own, finds it with find_package(muon), builds, runs, and its lines land in
# the log file in muduo's format. When the build has the muduo bridge, a
# muduo-style program builds against muon::muduo_compat from the package
# and runs.
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work/run"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/muon/base/Logging.h"
test -f "$work/prefix/include/muon/net/TcpServer.h"
cmake -S "$src/examples/hello" -B "$work/hello" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/hello" >/dev/null
cd "$work/run"
"$work/hello/hello"
shopt -s nullglob
logs=(hello.*.log)
[ ${#logs[@]} -eq 1 ] || { echo "expected one hello.*.log, found: ${logs[*]:-none}" >&2; exit 1; }
cat "${logs[0]}"
line='^[0-9]{8} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z? +[0-9]+ INFO  hello 42 pi=3\.142 - hello\.cc:[0-9]+$'
grep -Eq "$line" "${logs[0]}" || { echo "no INFO line in the expected format" >&2; exit 1; }
grep -Eq ' WARN  disk at 93\.5% - hello\.cc:[0-9]+$' "${logs[0]}" || { echo "no WARN line" >&2; exit 1; }
# muon::net from the package: a server and a client in one loop, one echo.
reply=$(timeout 20 "$work/hello/hello_net") || { echo "hello_net failed" >&2; exit 1; }
echo "$reply"
grep -qx "echoed: ping" <<<"$reply" || { echo "hello_net: no 'echoed: ping' line" >&2; exit 1; }
# The muduo bridge from the package, if this build has it.
if grep -q '^MUON_BUILD_MUDUO_COMPAT:BOOL=ON$' "$build/CMakeCache.txt"; then
  test -f "$work/prefix/include/muon/muduo_compat/muduo/net/TcpServer.h"
  test ! -e "$work/prefix/include/muduo"  # a real muduo's place stays free
  sources="$src/tests/muduo_compat/muduo_net_test.cc;$src/tests/muduo_compat/TcpServer_alone.cc"
  sources+=";$src/tests/muduo_compat/TcpClient_alone.cc"
  cmake -S "$src/tests/install/muduo_compat" -B "$work/muduo_style" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DMUDUO_STYLE_SOURCES="$sources" >/dev/null
  cmake --build "$work/muduo_style" >/dev/null
  timeout 30 "$work/muduo_style/muduo_net_test" || { echo "muduo-style program failed" >&2; exit 1; }
fi
echo "install_test: ok"
