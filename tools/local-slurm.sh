#!/usr/bin/env bash
# A Slurm cluster of four fake nodes on this machine, for the slurm tests:
#   tools/local-slurm.sh start   # install if missing, configure, start, wait until up
#   tools/local-slurm.sh stop    # stop every daemon it started
#   tools/local-slurm.sh status
# Both are idempotent. Run as root on Debian 12 (slurm-wlm 22.05). Every
# daemon listens on 127.0.0.1 only. The daemons are started by hand, not by
# systemd, so this works in containers too.
set -euo pipefail

nodes=(n1 n2 n3 n4)
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

write_config() {
  if [[ -f $conf_dir/slurm.conf ]] && ! grep -qF "$marker" "$conf_dir/slurm.conf"; then
    die "$conf_dir/slurm.conf exists and is not ours; this machine has a Slurm of its own"
  fi
  mkdir -p "$conf_dir" "$state/ctld" "$run" "$logs"
  for n in "${nodes[@]}"; do mkdir -p "$state/$n"; done
  # Why these settings:
  # - linuxproc and task/none need no cgroups, which containers rarely give;
  # - config_overrides lets the fake nodes claim more CPUs than the machine has;
  # - NoInAddrAny keeps every daemon on 127.0.0.1;
  # - CR_Core_Memory with DefMemPerCPU makes --mem part of scheduling, so a
  #   job without --mem does not take a whole node's memory;
  # - ReturnToService=2 brings a node back by itself after a restart.
  cat >"$conf_dir/slurm.conf" <<EOF
$marker
ClusterName=lp-local
SlurmctldHost=localhost(127.0.0.1)
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
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SchedulerParameters=sched_interval=1
MailProg=/bin/true
KillWait=5
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
DefMemPerCPU=100
NodeName=n[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[16821-16824] CPUs=4 RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP
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
  pid_alive "$run/slurmctld.pid" || slurmctld -c
  for n in "${nodes[@]}"; do
    pid_alive "$run/slurmd-$n.pid" || slurmd -N "$n"
  done
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
  # Jobs first, so no step outlives its slurmd.
  if pid_alive "$run/slurmctld.pid"; then
    scancel --user=root --full 2>/dev/null || true
    for _ in $(seq 50); do [[ -z $(squeue -h 2>/dev/null) ]] && break; sleep 0.2; done
  fi
  for n in "${nodes[@]}"; do stop_pidfile "$run/slurmd-$n.pid"; done
  stop_pidfile "$run/slurmctld.pid"
  stop_pidfile /run/munge/munged.pid
  echo "local-slurm: stopped"
}

case ${1:-} in
  start)
    [[ $(id -u) == 0 ]] || die "run as root: it installs packages and starts daemons"
    install_packages
    write_config
    start_munge
    start_daemons
    wait_up
    ;;
  stop) stop ;;
  status) sinfo -N 2>&1; squeue 2>&1 ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
