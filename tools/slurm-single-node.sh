#!/usr/bin/env bash
# slurm-single-node.sh: a real Slurm of one node on this machine, for SlurmTest (and for trying srun by hand).
#
#   tools/slurm-single-node.sh up [DIR]      start munged (unless one answers), slurmctld and slurmd; DIR holds
#                                            slurm.conf, state and logs (default /tmp/hccl-slurm)
#   tools/slurm-single-node.sh down [DIR]    stop what `up` started (.ci/run does, whatever happened)
#   then: SLURM_CONF=DIR/slurm.conf srun -n 4 --overcommit ...
#
# The node is this host, named as slurmd finds it (the short host name), with 8 CPUs whatever the hardware has
# (config_overrides), so that tests may start more tasks than cores; the daemons use ports 16817 and 16818, not
# Slurm's defaults, so that they never meet a Slurm already on the machine. Needs root and Debian's slurm-wlm and
# munge packages (slurmctld, slurmd, munged).
set -euo pipefail

action=${1:-}
dir=${2:-/tmp/hccl-slurm}
conf="$dir/slurm.conf"

# Stops the daemon a pid file names, if that process is still the daemon (a stale file may name another process).
stop_pid_file() {
  local f=$1 name=$2
  [ -f "$f" ] || return 0
  local pid
  pid=$(cat "$f")
  if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  stop_pid_file "$dir/slurmd.pid" slurmd
  stop_pid_file "$dir/slurmctld.pid" slurmctld
  stop_pid_file "$dir/munged.pid" munged
}

case "$action" in
  up)
    for tool in munged slurmctld slurmd sinfo; do
      command -v "$tool" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin"
      command -v "$tool" >/dev/null 2>&1 || { echo "slurm-single-node: $tool not found (apt-get install slurm-wlm munge)" >&2; exit 1; }
    done
    [ "$(id -u)" = 0 ] || { echo "slurm-single-node: needs root" >&2; exit 1; }
    # Whatever an earlier run left (a killed test): its daemons, so that the ports are free, and its jobs.
    down
    rm -rf "$dir/spool" "$dir/state"
    mkdir -p "$dir/spool" "$dir/state"
    node=$(hostname -s)
    cat > "$conf" <<CONF
ClusterName=hccl
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmdSpoolDir=$dir/spool
StateSaveLocation=$dir/state
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    if ! munge -n >/dev/null 2>&1; then
      mkdir -p /run/munge /var/log/munge /var/lib/munge
      [ -f /etc/munge/munge.key ] || { mkdir -p /etc/munge; dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=128 2>/dev/null; }
      # munged runs as root here (--force), so its directories are root's.
      chown -R root:root /run/munge /var/log/munge /var/lib/munge
      chmod 600 /etc/munge/munge.key
      munged --force --pid-file="$dir/munged.pid"
      for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
    fi
    slurmctld -f "$conf"
    slurmd -f "$conf"
    for _ in $(seq 300); do
      state=$(SLURM_CONF="$conf" sinfo -h -o %T 2>/dev/null || true)
      [ "$state" = idle ] && { echo "slurm-single-node: $node idle; SLURM_CONF=$conf"; exit 0; }
      sleep 0.1
    done
    echo "slurm-single-node: the node did not become idle (state '${state:-none}'); logs in $dir" >&2
    exit 1
    ;;
  down)
    down
    ;;
  *)
    echo "usage: $0 up|down [DIR]" >&2
    exit 2
    ;;
esac
