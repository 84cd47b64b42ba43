#!/usr/bin/env bash
# A Slurm cluster of four fake nodes on this machine, for the slurm tests:
#   tools/local-slurm.sh start   # install if missing, configure, start, wait until up
#   tools/local-slurm.sh start --hosts  # one node per test host (see below)
#   tools/local-slurm.sh stop    # stop every daemon it started, in either mode
#   tools/local-slurm.sh status
# Both are idempotent. Run as root on Debian 12 (slurm-wlm 22.05). Every
# daemon listens on 127.0.0.1 only. The daemons are started by hand, not by
# systemd, so this works in containers too.
#
# --hosts: the nodes are the test hosts of tools/test-hosts.sh (run
# `tools/test-hosts.sh up 4 [--ipv6]` first): slurmd nK runs in host hK's
# network namespace, as hostname hK, at hK's address, so a job step on nK
# has hK's network stack and reaches the other nodes only over the bridge.
# slurmctld stays in this machine's namespace, listening on the bridge's
# address only (10.231.0.254, or fd00:1a7c::fe), which the hosts and this
# machine's commands (sbatch, squeue) both reach. munged needs nothing: its
# socket is a file, which every network namespace sees. Run the slurm suite
# with LP_SLURM_TEST_HOSTS=1 then (docs/slurm.md), so that its nodes listen on
# their host's address, not on its loopback. Stop before
# `tools/test-hosts.sh down`: stop puts the loopback slurm.conf back, so
# that no later Slurm command aims at the bridge's address once it is gone.
set -euo pipefail

nodes=(n1 n2 n3 n4)
test_hosts=/run/lp-test-hosts  # tools/test-hosts.sh's record of the hosts it made
hosts_mode=false
family=4
conf_dir=/etc/slurm
state=/var/lib/lp-local-slurm
run=/run/lp-local-slurm
logs=/var/log/lp-local-slurm
marker="# written by launchpad's tools/local-slurm.sh"

die() { echo "local-slurm: $*" >&2; exit 1; }

install_packages() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
    command -v sbatch >/dev/null && command -v munged >/dev/null && return
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq munge slurmctld slurmd slurm-client >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq munge slurmctld slurmd slurm-client >/dev/null; }
}

# The lines of slurm.conf that differ with --hosts: where slurmctld listens,
# how the daemons talk, and the nodes.
loopback_config() {
  echo "SlurmctldHost=localhost(127.0.0.1)"
  echo "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny"
  echo "NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[16821-16824] CPUs=4 RealMemory=2000 State=UNKNOWN"
}
# - NoCtldInAddrAny keeps slurmctld on the bridge's address: it binds to
#   the address of its hostname, which is lp-root's when test-hosts.sh runs
#   it (run root); slurmd and srun in a host listen on any of its addresses,
#   which are the host's own, so one port serves every node;
# - EnableIPv6,DisableIPv4 for IPv6-only hosts (both are in Slurm 22.05).
hosts_config() {
  if [[ $family == 6 ]]; then
    echo "SlurmctldHost=lp-root(fd00:1a7c::fe)"
    echo "CommunicationParameters=NoCtldInAddrAny,EnableIPv6,DisableIPv4"
  else
    echo "SlurmctldHost=lp-root(10.231.0.254)"
    echo "CommunicationParameters=NoCtldInAddrAny"
  fi
  local k address
  for ((k = 1; k <= ${#nodes[@]}; k++)); do
    address=10.231.0.$k
    [[ $family == 6 ]] && address=fd00:1a7c::$k
    echo "NodeName=n$k NodeHostname=h$k NodeAddr=$address Port=16821 CPUs=4 RealMemory=2000 State=UNKNOWN"
  done
}
# This mode's lines of slurm.conf for the setting $1.
mode_config() { { if $hosts_mode; then hosts_config; else loopback_config; fi; } | grep "^$1="; }

write_config() {
  if [[ -f $conf_dir/slurm.conf ]] && ! grep -qF "$marker" "$conf_dir/slurm.conf"; then
    die "$conf_dir/slurm.conf exists and is not ours; this machine has a Slurm of its own"
  fi
  local mode=loopback
  $hosts_mode && mode="hosts ${#nodes[@]} IPv$family"
  if pid_alive "$run/slurmctld.pid" && [[ $(cat "$run/mode" 2>/dev/null || echo loopback) != "$mode" ]]; then
    die "a local Slurm runs already ($(cat "$run/mode" 2>/dev/null || echo loopback)); run $0 stop first"
  fi
  mkdir -p "$conf_dir" "$state/ctld" "$run" "$logs"
  for n in "${nodes[@]}"; do mkdir -p "$state/$n"; done
  echo "$mode" >"$run/mode"
  # Why these settings:
  # - linuxproc and task/none need no cgroups, which containers rarely give;
  # - config_overrides lets the fake nodes claim more CPUs than the machine has;
  # - NoInAddrAny keeps every daemon on 127.0.0.1 (with --hosts, see
  #   hosts_config);
  # - CR_Core_Memory with DefMemPerCPU makes --mem part of scheduling, so a
  #   job without --mem does not take a whole node's memory;
  # - ReturnToService=2 brings a node back by itself after a restart.
  cat >"$conf_dir/slurm.conf" <<EOF
$marker
ClusterName=lp-local
$(mode_config SlurmctldHost)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/%n
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd-%n.pid
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd-%n.log
SlurmctldPort=16817
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
$(mode_config CommunicationParameters)
SchedulerParameters=sched_interval=1
MailProg=/bin/true
KillWait=20
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
DefMemPerCPU=100
$(mode_config NodeName)
PartitionName=debug Nodes=n[1-${#nodes[@]}] Default=YES MaxTime=INFINITE State=UP
EOF
  # An empty cgroup.conf keeps slurmd from looking for cgroup mounts.
  [[ -f $conf_dir/cgroup.conf ]] || echo "$marker" >"$conf_dir/cgroup.conf"
}

pid_alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_munge() {
  if munge -n </dev/null >/dev/null 2>&1; then return; fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  [[ -f /etc/munge/munge.key ]] || { dd if=/dev/urandom of=/etc/munge/munge.key bs=128 count=1 2>/dev/null;
    chown munge:munge /etc/munge/munge.key; chmod 600 /etc/munge/munge.key; }
  # munged runs as its own user; --pid-file lets stop find it.
  runuser -u munge -- munged --pid-file=/run/munge/munged.pid
  for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && return; sleep 0.1; done
  die "munged did not start"
}

start_daemons() {
  if ! pid_alive "$run/slurmctld.pid"; then
    if $hosts_mode; then "$(dirname "$0")/test-hosts.sh" run root slurmctld -c; else slurmctld -c; fi
  fi
  local k n
  for ((k = 1; k <= ${#nodes[@]}; k++)); do
    n=${nodes[k - 1]}
    pid_alive "$run/slurmd-$n.pid" && continue
    if $hosts_mode; then
      "$(dirname "$0")/test-hosts.sh" run "$k" slurmd -N "$n"  # slurmd nK on host hK
    else
      slurmd -N "$n"
    fi
  done
}

# --hosts: a node per test host, in the family they were made with.
use_test_hosts() {
  [[ -f $test_hosts/hosts ]] ||
    die "--hosts: no test hosts are up; run $(dirname "$0")/test-hosts.sh up 4 [--ipv6] first"
  local n k
  n=$(cat "$test_hosts/hosts")
  family=$(cat "$test_hosts/family")
  nodes=()
  for ((k = 1; k <= n; k++)); do nodes+=("n$k"); done
  hosts_mode=true
}

# Up: every node takes jobs (idle, or already running some).
wait_up() {
  for _ in $(seq 100); do
    local states
    states=$(sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
    if [[ -n $states ]] && ! tr ' ' '\n' <<<"$states" | grep -qvxE 'idle|mixed|allocated|completing|'; then
      echo "local-slurm: ${#nodes[@]} nodes up ($(sinfo -h -o '%P %D %c CPUs %m MB %T'))"
      return
    fi
    sleep 0.2
  done
  sinfo -N 2>&1 | sed 's/^/local-slurm: /' >&2 || true
  die "the nodes are not up after 20 s; see $logs/"
}

stop_pidfile() {
  local file=$1
  pid_alive "$file" || { rm -f "$file"; return; }
  local pid
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || { rm -f "$file"; return; }; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$file"
}

stop() {
  local mode
  mode=$(cat "$run/mode" 2>/dev/null || echo loopback)
  # Jobs first, so no step outlives its slurmd. With --hosts, only while the
  # bridge is there: without it, the controller's address is no longer this
  # machine's, and a command would send it out by the default route.
  if pid_alive "$run/slurmctld.pid" && { [[ $mode != hosts* ]] || ip link show lp-br0 >/dev/null 2>&1; }; then
    scancel --user=root --full 2>/dev/null || true
    for _ in $(seq 50); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.2; done
  fi
  # Every node that runs, in either mode.
  for file in "$run"/slurmd-*.pid; do if [[ -e $file ]]; then stop_pidfile "$file"; fi; done
  stop_pidfile "$run/slurmctld.pid"
  # For the same reason, a Slurm command run later finds the loopback
  # configuration, as if --hosts had never been.
  if [[ $mode == hosts* ]]; then
    hosts_mode=false
    nodes=(n1 n2 n3 n4)
    write_config
  fi
  rm -f "$run/mode"
  stop_pidfile /run/munge/munged.pid
  echo "local-slurm: stopped"
}

case ${1:-} in
  start)
    [[ $(id -u) == 0 ]] || die "run as root: it installs packages and starts daemons"
    case ${2:-} in
      --hosts) use_test_hosts ;;
      "") ;;
      *) die "usage: $0 start [--hosts]" ;;
    esac
    install_packages
    write_config
    start_munge
    start_daemons
    wait_up
    ;;
  stop) stop ;;
  status) sinfo -N 2>&1; squeue 2>&1 ;;
  *) echo "usage: $0 start [--hosts]|stop|status" >&2; exit 2 ;;
esac
