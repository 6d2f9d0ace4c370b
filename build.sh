#!/usr/bin/env bash
# muon's one entry point; its commands: help_text below (./build.sh help).
# Missing Debian packages are installed with apt-get when run as root.
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD
jobs=$(nproc 2>/dev/null || echo 2)

die() { echo "build.sh: $*" >&2; exit 1; }

help_text() {
  cat <<'EOF'
./build.sh                 build Release into build/ (executables in build/bin/)
./build.sh test [WHICH]    build and run every test through ctest;
                           WHICH is plain, asan or tsan (default: all three)
./build.sh bench [ARGS]    build and run the benchmarks: logging, logging matrix, logging
                           latency, pingpong, http, ship (ARGS: --quick,
                           --only logging|matrix|latency|pingpong|http|ship|tls, --seconds S,
                           --repeat R)
./build.sh profile [WHAT]  build with frame pointers into build-profile/ and record perf
                           profiles (WHAT: logging, pingpong or all; default all);
                           perf.data and the reports in build/profile/
./build.sh fuzz [SECONDS]  build the libFuzzer targets (clang, ASan+UBSan) into build-fuzz/
                           and run each on its seed corpus for SECONDS (default 30)
EOF
}

# need PACKAGE... : install the Debian packages that are missing.
need() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "build.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
      || die "apt-get install ${missing[*]} failed"
  else
    die "missing packages: ${missing[*]}
  install them with: sudo apt-get install -y ${missing[*]}"
  fi
}

# liburing-dev: the io_uring engine (MUON_USE_URING=1). libboost1.81-dev (it
# replaces libboost-dev, 1.74): Asio with an io_uring backend for the bench.
# rsyslog: the syslog tests start their own rsyslogd (ctest -L syslog); the
# package's own daemon is never started or touched by them. rsyslog-relp:
# imrelp, the RELP server those daemons run for the RELP client's tests
# (ctest -L ship). pkg-config: the install test builds against the installed
# muon.pc as README shows. curl: the HTTP tests fetch from the servers with
# it (ctest -L http). prometheus: the inspector's test starts its own
# Prometheus (own configuration and storage in a temporary directory) to
# scrape inspect_server's /metrics (ctest -L http); the package's own
# service is never started or touched. openssl: the TLS tests make their CA
# and certificates with the command (ctest -L tls). systemd: the journald
# tests start their own systemd-journald in a mount namespace of their own and
# read it back with journalctl (ctest -L journal); the system's is never touched.
build_deps=(g++ cmake make pkg-config libgtest-dev libgmock-dev libbenchmark-dev libboost1.81-dev
            liburing-dev libspdlog-dev libgoogle-glog-dev tzdata libzstd-dev libssl-dev zstd rsyslog
            rsyslog-relp curl prometheus openssl systemd
            nlohmann-json3-dev)  # tests only: JSON lines checked with a real parser (ctest -L structured)

# configure_and_build DIR [CMAKE ARGS...]
# Warnings are errors here (our compiler, Debian 12's g++, is known); a
# plain cmake build leaves MUON_WERROR off, so a newer compiler's new
# warnings do not break a user's build.
configure_and_build() {
  local dir=$1; shift
  cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DMUON_WERROR=ON "$@" >/dev/null \
    || die "cmake configure of $dir failed"
  cmake --build "$dir" -j "$jobs" || die "build of $dir failed"
}

# run_tests DIR LABEL [CMAKE ARGS...]
# MUON_REQUIRE_ALL: a test whose real component (rsyslogd with imrelp) cannot
# run here fails instead of skipping; build_deps installed it.
run_tests() {
  local dir=$1 label=$2; shift 2
  echo "== $label build ($dir)"
  configure_and_build "$dir" "$@"
  echo "== $label tests"
  (cd "$dir" && MUON_REQUIRE_ALL=1 ctest --output-on-failure -j "$jobs" --timeout 600) \
    || die "$label tests failed"
}

cmd=${1:-build}
[ $# -gt 0 ] && shift
case "$cmd" in
  build)
    need "${build_deps[@]}"
    configure_and_build build
    ;;
  test)
    need "${build_deps[@]}"
    which=${1:-all}
    case "$which" in
      plain) run_tests build plain ;;
      asan)  run_tests build-asan "ASan+UBSan" -DMUON_SANITIZE=address -DMUON_BUILD_EXAMPLES=OFF ;;
      tsan)  run_tests build-tsan TSan -DMUON_SANITIZE=thread -DMUON_BUILD_EXAMPLES=OFF ;;
      all)
        run_tests build plain
        run_tests build-asan "ASan+UBSan" -DMUON_SANITIZE=address -DMUON_BUILD_EXAMPLES=OFF
        run_tests build-tsan TSan -DMUON_SANITIZE=thread -DMUON_BUILD_EXAMPLES=OFF
        ;;
      *) die "unknown test kind '$which' (plain, asan, tsan)" ;;
    esac
    ;;
  bench)
    # wrk: the HTTP benchmark's client (examples/bench/http_bench.sh); valgrind: the
    # instructions per call beside the latency (examples/bench/latency_bench.sh);
    # libsystemd-dev: spdlog's systemd_sink, the journald table's peer
    # (examples/bench/journal_bench.sh).
    need "${build_deps[@]}" gnuplot-nox procps wrk valgrind libsystemd-dev
    # Build output to stderr: stdout is the tables, for scripts to keep.
    configure_and_build build >&2
    exec "$top/examples/bench/run_bench.sh" "$top/build" "$@"
    ;;
  profile)
    need "${build_deps[@]}" linux-perf
    # Release code with frame pointers, so that perf's call graphs are whole.
    configure_and_build build-profile -DMUON_BUILD_TESTS=OFF \
      "-DCMAKE_CXX_FLAGS=-fno-omit-frame-pointer -g" >&2
    mkdir -p build/profile
    exec "$top/examples/bench/profile.sh" "$top/build-profile" "$top/build/profile" "$@"
    ;;
  fuzz)
    # nlohmann-json3-dev: JsonLines_fuzz checks the JSON it makes with a real parser.
    need clang libclang-rt-14-dev cmake make libgtest-dev libzstd-dev libssl-dev nlohmann-json3-dev
    seconds=${1:-30}
    case "$seconds" in ''|*[!0-9]*) die "fuzz: SECONDS must be a whole number, not '$seconds'" ;; esac
    # libFuzzer takes -max_total_time=0 as "no limit": a run that never ends.
    [ "$seconds" -gt 0 ] || die "fuzz: SECONDS must be at least 1"
    # fuzzer-no-link on everything: coverage reaches into base/ and net/; the
    # fuzz targets themselves link libFuzzer's main (tests/fuzz/CMakeLists.txt).
    cmake -S "$top" -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -DMUON_SANITIZE=address \
      -DMUON_BUILD_EXAMPLES=OFF -DMUON_BUILD_FUZZERS=ON >/dev/null \
      || die "cmake configure of build-fuzz failed"
    cmake --build build-fuzz -j "$jobs" --target LogStream_fuzz Buffer_fuzz Spool_fuzz LogReader_fuzz LogLevels_fuzz \
      Logfmt_fuzz JsonLines_fuzz JsonOfOperands_fuzz LogfmtLines_fuzz JsonLineReader_fuzz StructuredData_fuzz JournalEntry_fuzz TraceContext_fuzz \
      Socks4aRequest_fuzz ChatCodec_fuzz RelpResponse_fuzz HttpContext_fuzz TlsHandshake_fuzz \
      || die "build of build-fuzz failed"
    for target in LogStream Buffer Spool LogReader LogLevels Logfmt JsonLines JsonOfOperands LogfmtLines JsonLineReader \
                  StructuredData JournalEntry TraceContext Socks4aRequest ChatCodec RelpResponse HttpContext TlsHandshake; do
      # New inputs go to build-fuzz/corpus/; the committed seeds stay as they are.
      mkdir -p "build-fuzz/corpus/$target" build-fuzz/artifacts
      echo "== fuzz $target for ${seconds}s"
      "build-fuzz/bin/${target}_fuzz" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/artifacts/$target-" \
        "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" \
        || die "fuzz $target found a failure (input in build-fuzz/artifacts/)"
    done
    ;;
  -h|--help|help)
    help_text
    ;;
  *)
    die "unknown command '$cmd' (try ./build.sh help)"
    ;;
esac
