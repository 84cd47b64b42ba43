#!/usr/bin/env bash
# Renders the program graphs of some examples into docs/images/*.svg, from
# their own --lp_graph=dot output. A docs step, not a test: it needs Debian's
# graphviz (apt-get install graphviz) and a build directory.
#   tools/render-graphs.sh [build-dir]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
command -v dot >/dev/null || { echo "render-graphs: needs graphviz's dot (apt-get install graphviz)" >&2; exit 1; }
meson compile -C "$build" counter consumer_producers >/dev/null
for example in counter consumer_producers; do
  "$build/examples/$example" --lp_graph=dot | dot -Tsvg -o "docs/images/$example.svg"
  echo "docs/images/$example.svg"
done
