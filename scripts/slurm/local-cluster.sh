#!/usr/bin/env bash
# A single-node Slurm cluster on localhost in DIR (munged, slurmctld, slurmd from Debian's slurm-wlm and
# munge, with their own key, sockets, free ports, state and logs), for the sharding test and the
# throughput benchmark. Needs root (slurmd runs jobs as the submitting user).
#
#   scripts/slurm/local-cluster.sh start DIR   # prints SLURM_CONF=DIR/slurm.conf once the node is idle
#   scripts/slurm/local-cluster.sh stop DIR    # cancels jobs, stops the daemons
#
# Slurm clients (sbatch, squeue, scripts/slurm/submit.sh) reach it with SLURM_CONF=DIR/slurm.conf.
set -euo pipefail
cmd=${1:?usage: $0 start|stop DIR}
dir=${2:?usage: $0 start|stop DIR}
need() { command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] || { echo "$1 not found: install Slurm and munge (Debian: apt-get install -y slurm-wlm munge)" >&2; exit 2; }; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || shuf -i 20000-60000 -n 1; }
case "$cmd" in
start)
    [ "$(id -u)" = 0 ] || { echo "slurmd must run as root to run jobs; run this as root" >&2; exit 2; }
    for b in munged slurmctld slurmd sbatch sinfo; do need "$b"; done
    mkdir -p "$dir/state" "$dir/spool"
    dir=$(cd "$dir" && pwd)
    chmod 700 "$dir"
    head -c 1024 /dev/urandom >"$dir/munge.key"
    chmod 400 "$dir/munge.key"
    cat >"$dir/slurm.conf" <<CONF
ClusterName=webfreeze-local
SlurmctldHost=localhost
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    PATH="$PATH:/usr/sbin"
    munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munge.seed"
    slurmctld -i
    slurmd -N localhost
    # Daemons coming up have no event to wait on: poll, with a deadline.
    for _ in $(seq 1 300); do
        if [ "$(sinfo -h -o %t 2>/dev/null)" = idle ]; then
            echo "SLURM_CONF=$SLURM_CONF"
            exit 0
        fi
        sleep 0.2
    done
    echo "Slurm did not come up within 60 s; logs in $dir:" >&2
    tail -n 20 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/munged.log >&2 || true
    exit 1
    ;;
stop)
    export SLURM_CONF="$dir/slurm.conf"
    scancel --user "$(id -un)" 2>/dev/null || true
    for p in slurmd slurmctld munged; do
        if [ -f "$dir/$p.pid" ]; then kill "$(cat "$dir/$p.pid")" 2>/dev/null || true; fi
    done
    # Wait (bounded) for them to go, so a following start or rm finds nothing running.
    for p in slurmd slurmctld munged; do
        if [ -f "$dir/$p.pid" ]; then
            pid=$(cat "$dir/$p.pid")
            for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
