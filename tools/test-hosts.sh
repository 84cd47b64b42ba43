#!/usr/bin/env bash
# Test hosts on this machine: network namespaces joined by a bridge, so that
# programs meant for several hosts (a Slurm job's nodes) run with a network
# stack each and reach one another only over a network, not over loopback.
#   tools/test-hosts.sh up N [--ipv6]  # namespaces lp-h1..lp-hN, bridge lp-br0
#   tools/test-hosts.sh down           # remove all of it, ending what runs in it
#   tools/test-hosts.sh status
#   tools/test-hosts.sh run K CMD...   # CMD on host hK: its network, hostname hK
#   tools/test-hosts.sh run root CMD... # CMD here, as lp-root (the bridge's address)
# Run as root (Debian 12: iproute2, util-linux). Why:
# - one machine, one network stack: a node that advertises 127.0.0.1 works
#   there by luck; here a host's loopback is its own, as on a real cluster;
# - host hK is namespace lp-hK, with 10.231.0.K/24 (with --ipv6,
#   fd00:1a7c::K/64 and no IPv4 but loopback) on its eth0, the other end of
#   which, lp-vK, is a port of bridge lp-br0; the root namespace is on the
#   bridge too, as 10.231.0.254 (fd00:1a7c::fe), which is where a launcher or
#   a controller outside the hosts listens and is reached;
# - private addresses only, no default route in a namespace and no
#   forwarding: no packet leaves for anywhere but these hosts and the bridge;
# - names: /etc/netns/lp-hK/hosts lists h1..hN and lp-root (the bridge's
#   address); `ip netns exec lp-hK` bind-mounts it over /etc/hosts. But it
#   also mounts a fresh /sys, without this machine's cgroup mounts (slurmd
#   will not start without them), and makes no UTS namespace, so the
#   hostname stays this machine's. `run` does neither: it enters the network
#   namespace with nsenter, and in a mount and a UTS namespace of its own
#   (unshare) bind-mounts the hosts file and sets the hostname to hK. The
#   file system, /sys included, is this machine's, as on hosts that share
#   one (a cluster's shared home, where the binaries and run directories are);
# - `run root` is this machine's network under the name lp-root: a daemon
#   that listens on the address of its hostname (slurmctld with
#   NoCtldInAddrAny) then listens on the bridge's address only;
# - IPv6 addresses skip duplicate address detection (nodad), so they work at
#   once.
# `up` undoes what it did if it fails half-way; `down` is idempotent.
set -euo pipefail

bridge=lp-br0
state=/run/lp-test-hosts  # what `up` made: hosts (N), family (4 or 6), the hosts file
marker="# written by launchpad's tools/test-hosts.sh"
v4_prefix=10.231.0
v6_prefix=fd00:1a7c:
root_v4=$v4_prefix.254
root_v6=${v6_prefix}:fe

die() { echo "test-hosts: $*" >&2; exit 1; }

# The hosts `up` made, by their namespaces' names.
our_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^lp-h[0-9]+$' | sort -V || true; }

check_tools() {
  local missing=()
  for tool in ip awk nsenter unshare hostname mount sysctl; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  ((${#missing[@]} == 0)) || die "missing commands: ${missing[*]} (apt-get install iproute2 util-linux mount hostname procps gawk)"
  ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here: this kernel or container gives no network namespaces"
  # Bridges and veth pairs are kernel modules: try both once, on a scratch name.
  if ! ip link add lp-probe0 type bridge 2>/dev/null; then
    die "cannot make a bridge (ip link add type bridge failed): the kernel lacks the bridge module, or this container lacks CAP_NET_ADMIN"
  fi
  ip link del lp-probe0
  if ! ip link add lp-probe0 type veth peer name lp-probe1 2>/dev/null; then
    die "cannot make a veth pair (ip link add type veth failed): the kernel lacks the veth module"
  fi
  ip link del lp-probe0
}

# Ends every process in namespace $1: TERM, then KILL after 5 s.
kill_namespace_processes() {
  local ns=$1 pids
  mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
  ((${#pids[@]} > 0)) || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 50); do
    [[ -z $(ip netns pids "$ns" 2>/dev/null || true) ]] && return 0
    sleep 0.1
  done
  mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null || true)
  ((${#pids[@]} == 0)) || kill -9 "${pids[@]}" 2>/dev/null || true
  sleep 0.2
}

down() {
  local ns
  for ns in $(our_namespaces); do
    kill_namespace_processes "$ns"
    ip netns del "$ns" 2>/dev/null || true  # deletes its end of the veth pair, and so the pair
  done
  # Veth ends left by an `up` that failed between making a pair and moving it.
  for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E '^lp-v[0-9]+$' || true); do
    ip link del "$link" 2>/dev/null || true
  done
  ip link show "$bridge" >/dev/null 2>&1 && ip link del "$bridge"
  for dir in /etc/netns/lp-h*; do
    [[ -d $dir ]] || continue
    if grep -qsF "$marker" "$dir/hosts"; then rm -rf "$dir"; else rmdir "$dir" 2>/dev/null || true; fi
  done
  rmdir /etc/netns 2>/dev/null || true  # only if nobody else keeps anything there
  rm -rf "$state"
  return 0
}

# The address of host $1 (1..N, or "root" for the bridge's) in family $2.
address() {
  if [[ $1 == root ]]; then [[ $2 == 6 ]] && echo "$root_v6" || echo "$root_v4"
  else [[ $2 == 6 ]] && echo "$v6_prefix:$1" || echo "$v4_prefix.$1"; fi
}

hosts_file() {
  local n=$1 family=$2 k
  echo "$marker"
  echo "127.0.0.1 localhost"
  echo "::1 localhost ip6-localhost ip6-loopback"
  echo "$(address root "$family") lp-root"
  for ((k = 1; k <= n; k++)); do echo "$(address "$k" "$family") h$k"; done
}

up() {
  local n=$1 family=$2 k
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 250)) || die "N must be 1 to 250, not '$n'"
  if [[ -f $state/hosts ]] && [[ $(cat "$state/hosts") == "$n" && $(cat "$state/family") == "$family" ]] &&
     [[ $(our_namespaces | wc -l) == "$n" ]]; then
    echo "test-hosts: $n hosts already up (IPv$family)"
    return
  fi
  [[ -z $(our_namespaces) ]] && ! ip link show "$bridge" >/dev/null 2>&1 ||
    die "test hosts of another shape are up; run $0 down first"
  check_tools
  local route
  route=$(ip route show to match "$v4_prefix.0/24" | grep -v '^default' || true)
  [[ -z $route ]] || die "this machine already routes $v4_prefix.0/24 ($route); the test hosts would clash"
  route=$(ip -6 route show to match "$v6_prefix:/64" 2>/dev/null | grep -v '^default' || true)
  [[ -z $route ]] || die "this machine already routes $v6_prefix:/64 ($route); the test hosts would clash"
  # From here, a failure undoes everything made so far.
  trap 'echo "test-hosts: up failed; removing what it made" >&2; down' EXIT
  mkdir -p "$state"
  echo "$n" >"$state/hosts"
  echo "$family" >"$state/family"
  hosts_file "$n" "$family" >"$state/hosts_file"
  ip link add "$bridge" type bridge
  if [[ $family == 6 ]]; then
    # No router advertisements or autoconfiguration on this bridge: the
    # addresses are the static ones below.
    sysctl -qw "net.ipv6.conf.$bridge.accept_ra=0" "net.ipv6.conf.$bridge.autoconf=0"
    ip -6 addr add "$root_v6/64" dev "$bridge" nodad
  else
    ip addr add "$root_v4/24" dev "$bridge"
  fi
  ip link set "$bridge" up
  for ((k = 1; k <= n; k++)); do
    local ns=lp-h$k
    mkdir -p "/etc/netns/$ns"
    cp "$state/hosts_file" "/etc/netns/$ns/hosts"
    ip netns add "$ns"
    ip link add "lp-v$k" type veth peer name eth0 netns "$ns"
    ip link set "lp-v$k" master "$bridge" up
    ip -n "$ns" link set lo up
    if [[ $family == 6 ]]; then
      ip netns exec "$ns" sysctl -qw net.ipv6.conf.eth0.accept_dad=0 net.ipv6.conf.eth0.accept_ra=0
      ip -n "$ns" -6 addr add "$(address "$k" 6)/64" dev eth0 nodad
    else
      ip -n "$ns" addr add "$(address "$k" 4)/24" dev eth0
    fi
    ip -n "$ns" link set eth0 up
  done
  trap - EXIT
  echo "test-hosts: $n hosts up: h1..h$n in namespaces lp-h1..lp-h$n, bridge $bridge" \
    "($(address 1 "$family")..$(address "$n" "$family"); this machine: $(address root "$family"))"
}

status() {
  local namespaces
  namespaces=$(our_namespaces)
  if [[ -z $namespaces ]] && ! ip link show "$bridge" >/dev/null 2>&1; then
    echo "test-hosts: down"
    return
  fi
  ip -br addr show dev "$bridge" 2>/dev/null || echo "no bridge $bridge"
  for ns in $namespaces; do
    local addresses processes
    addresses=$(ip -n "$ns" -br addr show dev eth0 2>/dev/null | awk '{$1=$2=""; print}' | xargs)
    processes=$(ip netns pids "$ns" 2>/dev/null | wc -l)
    echo "$ns: ${addresses:-no address} ($processes processes)"
  done
}

# CMD on host hK (in its network namespace), or with K "root" on this
# machine's network, with the hosts' hosts file and the host's name (see the
# top).
run_on() {
  local k=$1 enter=() name=lp-root
  shift
  [[ -f $state/hosts_file ]] || die "no test hosts; run $0 up N first"
  if [[ $k != root ]]; then
    ip netns list | awk '{print $1}' | grep -qx "lp-h$k" || die "no host h$k"
    enter=(nsenter --net="/run/netns/lp-h$k")
    name=h$k
  fi
  (($# > 0)) || die "run K CMD...: no command"
  # unshare --mount makes every mount private: the bind stays in here.
  exec "${enter[@]}" unshare --mount --uts sh -c \
    'mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"' "$state/hosts_file" "$name" "$@"
}

[[ $(id -u) == 0 ]] || die "run as root: it makes network namespaces and links"
case ${1:-} in
  up)
    family=4
    [[ ${3:-} == --ipv6 ]] && family=6
    [[ -n ${2:-} ]] && [[ -z ${3:-} || ${3:-} == --ipv6 ]] && [[ $# -le 3 ]] ||
      die "usage: $0 up N [--ipv6]"
    up "$2" "$family"
    ;;
  down) down; echo "test-hosts: down" ;;
  status) status ;;
  run) [[ -n ${2:-} ]] || die "usage: $0 run K CMD..."; shift; run_on "$@" ;;
  *) echo "usage: $0 up N [--ipv6] | down | status | run K|root CMD..." >&2; exit 2 ;;
esac
