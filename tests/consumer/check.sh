#!/usr/bin/env bash
# Builds tests/consumer/main.cpp the six ways a user can consume launchpad,
# each in a fresh temporary directory, and runs every program (it must exit 0
# on its own, under local_mt and under local_mp):
#   (a) a meson project with the library as a subproject: dependency('launchpad')
#       finds subprojects/launchpad (a symlink to the repository root), whose
#       meson.build overrides the 'launchpad' dependency;
#   (b) the library installed by `meson install` into a temporary prefix, the
#       same meson project finding it through the installed launchpad.pc;
#   (c) plain g++ on the single header, as the README shows it:
#         g++ -std=c++20 -I single_include $(pkg-config --cflags nlohmann_json) \
#             main.cpp -o main $(pkg-config --libs openssl) -pthread
#       which must neither include <httplib.h> nor need libcpp-httplib.so:
#       cpp-httplib is the tests' and benchmarks' alone;
#   (d) the single header with the compiled part in a file of its own, as
#       docs/getting-started.md shows it: LP_SEPARATE_COMPILATION everywhere,
#       LP_IMPLEMENTATION in that file;
#   (e) the library installed as in (b) (the same install when both run), a
#       CMake project (tests/consumer/CMakeLists.txt) finding it through the
#       installed CMake package: find_package(launchpad), launchpad::launchpad;
#   (f) the same CMake project with the repository as a subdirectory
#       (add_subdirectory, as FetchContent does): the top-level CMakeLists.txt
#       builds the compiled part.
# Usage: tests/consumer/check.sh [a|b|c|d|e|f ...]   (default: all six; e and
# f are skipped, saying so, when cmake is missing and they were not named)
# Set LP_KEEP_TMP=1 to keep the temporary directory. Needs meson, ninja,
# pkg-config, g++, readelf, the Debian packages the README lists (b and e
# configure the repository, tests included, so cpp-httplib too), and cmake
# for e, f.
set -Eeuo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
consumer=$root/tests/consumer
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lp-consumer-check.XXXXXX")
start=$SECONDS
current=""
log=$tmp/current.log

cleanup() {
  if [[ -n ${LP_KEEP_TMP:-} ]]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
on_error() {
  local status=$?
  echo >&2
  local why="exit $status"
  ((status == 124 || status == 137)) && why="timed out"
  echo "FAILED ($why): $current" >&2
  if [[ -s $log ]]; then
    echo "---- last lines of its output ----" >&2
    tail -n 60 "$log" >&2
  fi
  exit "$status"
}
trap cleanup EXIT
trap on_error ERR

step() { echo; echo "== $* ($((SECONDS - start)) s)"; }

# quiet SECONDS CMD...: runs CMD with a time limit, its output in $log
# (shown only on failure).
quiet() {
  local limit=$1; shift
  current="$*"
  echo "+ $*"
  : >"$log"
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
}

# check_runs BINARY: the program must exit 0 by itself, threads and processes.
check_runs() {
  local binary=$1 mode
  for mode in local_mt local_mp; do
    current="$binary --lp_launch=$mode"
    echo "+ $current"
    : >"$log"
    timeout --kill-after=5 60 "$binary" --lp_launch="$mode" 2>&1 | tee "$log"
    grep -q "Hello, consumer" "$log" || {
      echo "the program exited 0 without its greeting" >&2; false; }
  done
}

# no_warnings WHAT: the last command (its output in $log) printed no warning.
no_warnings() {
  if grep -qi "warning" "$log"; then current="$1 printed warnings"; false; fi
}

# defines_no_compiled_part OBJECT: the user's object file leaves the compiled
# part to the library (it was compiled with LP_SEPARATE_COMPILATION).
defines_no_compiled_part() {
  if nm -C --defined-only "$1" | grep -q "lp::detail::launch_main"; then
    current="${1#"$tmp/"} defines lp::detail::launch_main: the compiled part was not left out"
    false
  fi
}

# install_library: `meson install` of the library into $tmp/prefix, once for
# (b) and (e). Headers, the compiled part, launchpad.pc and the CMake package
# are installed, and lp-launchpad (launchpad.launch() starts it): only they
# are built, not the tests and examples.
install_library() {
  [[ -d $tmp/prefix ]] && return
  quiet 300 meson setup "$tmp/lib" "$root" --prefix="$tmp/prefix"
  quiet 900 ninja -C "$tmp/lib" -j 2 liblaunchpad.a lp-launchpad
  quiet 300 meson install -C "$tmp/lib" --no-rebuild
}

# Nothing from the environment may stand in for the library under test.
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH

if (($#)); then want=" $* "; else want=" a b c d e f "; fi
for part in $want; do
  [[ $part == [abcdef] ]] || { echo "usage: $0 [a|b|c|d|e|f ...]" >&2; exit 2; }
done
if ! command -v cmake >/dev/null && [[ $want == *" "[ef]" "* ]]; then
  (($#)) && { echo "(e) and (f) need cmake (apt-get install cmake)" >&2; exit 2; }
  echo "skipping (e) and (f): cmake is not installed"
  want=${want/ e / }
  want=${want/ f / }
fi

if [[ $want == *" a "* ]]; then
  step "(a) meson subproject: dependency('launchpad') from tests/consumer/subprojects/launchpad"
  [[ -f $consumer/subprojects/launchpad/meson.build ]] || {
    echo "tests/consumer/subprojects/launchpad must be a symlink to ../../.. (the repository root)" >&2
    exit 1; }
  quiet 300 meson setup "$tmp/a" "$consumer" --force-fallback-for=launchpad
  grep -q "Dependency launchpad found: YES .*(overridden)" "$log" || {
    current="(a) dependency('launchpad') did not come from the subproject's override"; false; }
  quiet 900 meson compile -C "$tmp/a"
  check_runs "$tmp/a/consumer"
fi

if [[ $want == *" b "* ]]; then
  step "(b) meson install into $tmp/prefix, then dependency('launchpad') from launchpad.pc"
  install_library
  pc=$(find "$tmp/prefix" -name launchpad.pc -print -quit)
  [[ -n $pc ]] || { current="(b) meson install wrote no launchpad.pc under $tmp/prefix"; false; }
  [[ -f $tmp/prefix/include/launchpad/launchpad.hpp ]] || {
    current="(b) meson install wrote no include/launchpad/launchpad.hpp"; false; }
  others=$(find "$tmp/prefix/include" -type f ! -name '*.hpp')
  [[ -z $others ]] || {
    current="(b) meson install put files other than headers under include/: $others"; false; }
  echo "launchpad.pc: ${pc#"$tmp/"}"
  sed 's/^/  | /' "$pc"
  export PKG_CONFIG_PATH=${pc%/*}
  quiet 60 pkg-config --print-errors --exists launchpad
  # nofallback: the subproject must not stand in for the installed copy.
  quiet 300 meson setup "$tmp/b" "$consumer" --wrap-mode=nofallback
  grep -q "Run-time dependency launchpad found: YES" "$log" || {
    current="(b) dependency('launchpad') was not found through pkg-config"; false; }
  quiet 900 meson compile -C "$tmp/b"
  check_runs "$tmp/b/consumer"
  unset PKG_CONFIG_PATH
fi

if [[ $want == *" c "* ]]; then
  step "(c) g++ with single_include/ and the dependencies' pkg-config flags, no cpp-httplib"
  cd "$root"
  # -MD lists every header the compile read, for the check below.
  # shellcheck disable=SC2046  # pkg-config's output is meant to split into words
  quiet 900 g++ -std=c++20 -I single_include $(pkg-config --cflags nlohmann_json) \
    -MD -MF "$tmp/c.d" tests/consumer/main.cpp -o "$tmp/c" $(pkg-config --libs openssl) -pthread
  if grep -qw 'httplib\.h' "$tmp/c.d"; then
    current="(c) the single header included $(grep -ow '[^ ]*httplib\.h' "$tmp/c.d" | head -1)"; false
  fi
  if readelf -d "$tmp/c" | grep -q "NEEDED.*httplib"; then
    current="(c) the program needs $(readelf -d "$tmp/c" | grep -o '\[[^]]*httplib[^]]*\]')"; false
  fi
  check_runs "$tmp/c"
fi

if [[ $want == *" d "* ]]; then
  step "(d) g++ with single_include/, the compiled part in launchpad.cpp (LP_IMPLEMENTATION)"
  cd "$root"
  printf '#define LP_IMPLEMENTATION\n#include <launchpad/launchpad.hpp>\n' >"$tmp/launchpad.cpp"
  # shellcheck disable=SC2046
  flags=(-std=c++20 -DLP_SEPARATE_COMPILATION -I single_include
         $(pkg-config --cflags nlohmann_json))
  quiet 900 g++ "${flags[@]}" -c "$tmp/launchpad.cpp" -o "$tmp/launchpad.o"
  quiet 900 g++ "${flags[@]}" -c tests/consumer/main.cpp -o "$tmp/main.o"
  # The user's file defines none of the compiled part: it is launchpad.o's alone.
  defines_no_compiled_part "$tmp/main.o"
  quiet 300 g++ "$tmp/main.o" "$tmp/launchpad.o" -o "$tmp/d" $(pkg-config --libs openssl) -pthread
  check_runs "$tmp/d"
fi

if [[ $want == *" e "* ]]; then
  step "(e) meson install into $tmp/prefix, then find_package(launchpad) from its CMake package"
  install_library
  config=$(find "$tmp/prefix" -name launchpadConfig.cmake -print -quit)
  [[ -n $config && -f ${config%/*}/launchpadConfigVersion.cmake ]] || {
    current="(e) meson install wrote no cmake/launchpad/launchpad{Config,ConfigVersion}.cmake"; false; }
  echo "launchpadConfig.cmake: ${config#"$tmp/"}"
  quiet 300 cmake -S "$consumer" -B "$tmp/e" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix"
  no_warnings "(e) cmake's configuration"
  grep -qx "launchpad_DIR:PATH=${config%/*}" "$tmp/e/CMakeCache.txt" || {
    current="(e) find_package(launchpad) did not find the copy installed in $tmp/prefix"; false; }
  quiet 900 cmake --build "$tmp/e" --parallel 2
  no_warnings "(e) the build"
  defines_no_compiled_part "$tmp/e/CMakeFiles/consumer.dir/main.cpp.o"
  check_runs "$tmp/e/consumer"
fi

if [[ $want == *" f "* ]]; then
  step "(f) CMake: add_subdirectory() of the repository, which builds the compiled part"
  # The compiled part too must build without a warning at meson's warning_level=3.
  quiet 300 cmake -S "$consumer" -B "$tmp/f" -G Ninja -DLAUNCHPAD_SOURCE_DIR="$root" \
    -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic"
  no_warnings "(f) cmake's configuration"
  quiet 900 cmake --build "$tmp/f" --parallel 2
  no_warnings "(f) the build"
  [[ -f $tmp/f/launchpad/liblaunchpad.a ]] || {
    current="(f) the repository's CMakeLists.txt built no liblaunchpad.a"; false; }
  defines_no_compiled_part "$tmp/f/CMakeFiles/consumer.dir/main.cpp.o"
  check_runs "$tmp/f/consumer"
fi

step "consumers OK"
