#!/usr/bin/env bash
# Runs the unit suites and the Python nodes' suites N times under ASan+UBSan (clang++) and N times under
# TSan (g++), in the build directories and with the options .ci/run uses,
# and counts the runs that failed: a test that fails by chance shows up here
# long before it costs a landing. Each failed run's meson log is kept.
# Usage: tools/sanitizer-loops.sh [N [address|thread]]   (default 20 runs of
# each; needs what .ci/run installs: clang, libclang-rt-dev, meson)
# Prints one line per run and a closing line "P passed, F failed".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-20}
case ${2:-both} in
  address) dirs=(build-clang) ;;
  thread) dirs=(build-thread) ;;
  both) dirs=(build-clang build-thread) ;;
  *) echo "usage: $0 [N [address|thread]]" >&2; exit 2 ;;
esac
targets=(tests/unit tests/program examples/consumer_producers examples/actor_learner
  tests/python_nodes/python_nodes_threads tests/python_nodes/python_nodes_processes
  tests/python_nodes/python_nodes_program examples/python_learner)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp

[[ -d build-clang ]] || CXX=clang++ meson setup build-clang -Db_sanitize=address,undefined \
  -Db_lundef=false -Dwerror=true -Dfuzz=true >/dev/null
[[ -d build-thread ]] || meson setup build-thread -Db_sanitize=thread -Db_lundef=false >/dev/null
logs=$(mktemp -d "${TMPDIR:-/tmp}/lp-sanitizer-loops.XXXXXX")
passed=0 failed=0
for dir in "${dirs[@]}"; do
  ninja -C "$dir" "${targets[@]}" >/dev/null
  for ((i = 1; i <= runs; i++)); do
    begin=$SECONDS
    if meson test -C "$dir" --no-rebuild --suite unit --suite python_nodes >"$logs/$dir.$i.out" 2>&1; then
      passed=$((passed + 1))
      echo "$dir run $i: passed ($((SECONDS - begin)) s)"
      rm -f "$logs/$dir.$i.out"
    else
      failed=$((failed + 1))
      cp "$dir/meson-logs/testlog.txt" "$logs/$dir.$i.testlog.txt"
      echo "$dir run $i: FAILED ($((SECONDS - begin)) s): $(grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT)' \
        "$logs/$dir.$i.out" | awk '{print $4}' | tr '\n' ' ')log $logs/$dir.$i.testlog.txt"
    fi
  done
done
((failed)) || rm -rf "$logs"
echo "$passed passed, $failed failed"
((failed == 0))
