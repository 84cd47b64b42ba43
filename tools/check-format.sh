#!/usr/bin/env bash
# Whether every C++ source matches .clang-format (issue 44). CI checks, it
# never rewrites: whoever changes a source formats it, with
#   tools/check-format.sh --fix
# Sources are formatted by Debian 12's clang-format (14); another release
# lays some constructs out otherwise, so any other is refused rather than
# trusted. Generated files (single_include/, the status page's header that
# tools/embed.py writes, the protocol's that tools/protocol.py writes) are
# left as their tools write them.
set -euo pipefail
cd "$(dirname "$0")/.."
want=14
if ! command -v clang-format >/dev/null; then
  echo "tools/check-format.sh: no clang-format (apt-get install clang-format)" >&2
  exit 2
fi
have=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [[ "$have" != "$want" ]]; then
  echo "tools/check-format.sh: clang-format $have here; the sources follow clang-format $want" \
    "(Debian 12's clang-format package)" >&2
  exit 2
fi
mapfile -t sources < <(find include src tests examples benchmarks tools -name node_modules -prune \
  -o \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' \) -type f \
  ! -path include/launchpad/detail/status/status_page.hpp \
  ! -path include/launchpad/detail/protocol/constants.hpp -print | sort)
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${sources[@]}"
  exit 0
fi
report=$(mktemp)
trap 'rm -f "$report"' EXIT
if ! clang-format --dry-run --Werror "${sources[@]}" 2>"$report"; then
  grep -o '^[^:]*\.\(hpp\|cpp\|h\):' "$report" | sort -u | sed 's/:$//; s/^/  /' >&2
  echo "tools/check-format.sh: these sources do not match .clang-format; run" \
    "tools/check-format.sh --fix" >&2
  exit 1
fi
echo "tools/check-format.sh: ${#sources[@]} sources match .clang-format"
