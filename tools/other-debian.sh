#!/usr/bin/env bash
# Runs the README's two commands, word for word, in a fresh root of another
# Debian release (default: trixie, Debian 13), as a new user on that system
# would: its compiler, Boost, nlohmann_json, cpp-httplib and meson. (The
# consumer builds and clang++ run once, on CI's own Debian: .ci/run.) The
# root is made by mmdebstrap from Debian's mirror, entered with chroot, and
# removed at the end whatever happens, with every process left in it.
# Usage (as root): tools/other-debian.sh [SUITE]
# Set LP_KEEP_ROOT=1 to keep the root (its path is printed).
set -Eeuo pipefail

suite=${1:-trixie}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
start=$SECONDS
step() { echo; echo "== $suite: $* ($((SECONDS - start)) s)"; }

[[ $(id -u) == 0 ]] || { echo "$0 needs root (mmdebstrap, chroot and mounts)" >&2; exit 2; }
command -v mmdebstrap >/dev/null || {
  echo "$0 needs mmdebstrap: apt-get install -y mmdebstrap" >&2; exit 2; }

root=$(mktemp -d "${TMPDIR:-/var/tmp}/lp-$suite.XXXXXX")
mounted=()
cleanup() {
  local status=$?
  # Nothing started in the root outlives it.
  local p
  for p in /proc/[0-9]*; do
    # A process may end between the two: a failed kill must not end the
    # clean-up under set -e, before the umounts.
    [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]] && { kill -9 "${p#/proc/}" 2>/dev/null || true; }
  done
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  if [[ -n ${LP_KEEP_ROOT:-} ]]; then echo "kept $root"; else rm -rf --one-file-system "$root"; fi
  exit "$status"
}
trap cleanup EXIT

step "a fresh root by mmdebstrap in $root"
mmdebstrap --quiet --variant=apt "$suite" "$root"
for fs in proc sys dev dev/pts dev/shm; do
  mkdir -p "$root/$fs"
  mount --bind "/$fs" "$root/$fs"
  mounted+=("$root/$fs")
done
# A clone of what is committed, as CI's own checkout is.
git clone --quiet "$repo" "$root/src/launchpad"

# in_root COMMAND: runs a shell command in the checkout inside the root,
# with a clean environment.
in_root() {
  echo "+ $1"
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /src/launchpad && $1"
}

# The README's two commands: the first two ```sh blocks.
readme_command() {
  awk -v want="$1" '/^```sh$/ { n++; inside = 1; next } /^```$/ { inside = 0 } inside && n == want' \
    "$repo/README.md"
}
install_and_run=$(readme_command 1)
test_suite=$(readme_command 2)
[[ -n $install_and_run && -n $test_suite ]] || {
  echo "README.md has no two \`\`\`sh blocks to run" >&2; exit 1; }

step "the README's first command: install, build and run the example"
in_root "$install_and_run" 2>&1 | tee "$root/first.log"
grep -q "total: 4000" "$root/first.log" || { echo "the example did not print total: 4000" >&2; exit 1; }
if grep -E "warning:" "$root/first.log"; then echo "g++ warned on $suite (above)" >&2; exit 1; fi

step "the README's second command: the whole test suite"
in_root "$test_suite" 2>&1 | tee "$root/second.log"
# meson test builds the rest of the tree first, and shows the compiler's words.
if grep -E "warning:" "$root/second.log"; then echo "g++ warned on $suite (above)" >&2; exit 1; fi

step "done"
