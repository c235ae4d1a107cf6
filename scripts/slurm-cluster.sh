#!/usr/bin/env bash
# A one-node SLURM cluster on this machine (root, Debian's slurm-wlm and munge), for testing the
# workflow's SLURM profile for real:  bash scripts/slurm-cluster.sh start | stop | status
# Accounting is off (no slurmdbd): status checks use squeue, and MinJobAge keeps finished jobs visible.
set -euo pipefail
cmd=${1:-start}
CONF=/etc/slurm/slurm.conf
STATE=/var/spool/slurmctld

start() {
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
  fi
  host=$(hostname -s)
  read -r cpus mem < <(slurmd -C | awk '/NodeName/ {for (i=1;i<=NF;i++) {split($i,a,"="); v[a[1]]=a[2]}; print v["CPUs"], v["RealMemory"]}')
  mkdir -p /etc/slurm "$STATE" /var/spool/slurmd /var/log/slurm /run/munge
  cat > "$CONF" <<CONF
ClusterName=moveorder-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=3600
InactiveLimit=0
KillWait=10
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  [ -s /etc/munge/munge.key ] || mungekey --create >/dev/null 2>&1 || dd if=/dev/urandom of=/etc/munge/munge.key bs=1k count=1 2>/dev/null
  chown -R munge:munge /etc/munge /run/munge 2>/dev/null || true
  chmod 400 /etc/munge/munge.key
  pgrep -x munged >/dev/null || su -s /bin/sh munge -c "/usr/sbin/munged" 2>/dev/null || /usr/sbin/munged --force
  pgrep -x slurmctld >/dev/null || slurmctld
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 30); do
    if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then sinfo; return 0; fi
    scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
    sleep 1
  done
  echo "slurm-cluster: the node did not come up" >&2
  sinfo >&2 || true
  tail -20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
  return 1
}

stop() {
  pkill -x slurmd || true
  pkill -x slurmctld || true
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) sinfo; squeue ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
