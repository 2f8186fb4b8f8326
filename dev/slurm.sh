#!/usr/bin/env bash
# A single-node SLURM on this machine, for testing cluster submission (profiles/slurm) for real:
# munge, MariaDB, slurmdbd (accounting: the executor plugin reads job states from sacct),
# slurmctld and slurmd, all plain processes (no systemd) with their configuration, sockets, pid
# files, logs and databases in one state directory. The system's /etc is not touched.
#
#   dev/slurm.sh start    install what is missing (apt), write the configs, start the daemons
#                         that are not running, register cluster/account/user, wait until the
#                         node is idle; prints the `export SLURM_CONF=...` the clients need
#   dev/slurm.sh stop     cancel the cluster's jobs, stop every daemon by the pid in its pid file
#   dev/slurm.sh status   which daemons run (by pid file), then sinfo
#   dev/slurm.sh env      the line to eval in a shell: export SLURM_CONF=...
#
# Environment (all optional):
#   EDITCREDIT_SLURM_DIR   the state directory (default: <repo>/.slurm; git ignores it)
#   EDITCREDIT_SLURM_PORT  first of four consecutive TCP ports on 127.0.0.1: slurmctld, slurmd,
#                          slurmdbd, MariaDB (default 6817, SLURM's own defaults for the first three)
#   EDITCREDIT_SLURM_SYSTEM_CONF  the link srun reads by default (default /etc/slurm/slurm.conf)
# Run as root (the daemons run as root; jobs run as the submitting user). Idempotent: `start`
# on a running cluster checks it and returns; `stop` on a stopped one does nothing.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
STATE=${EDITCREDIT_SLURM_DIR:-$REPO/.slurm}
PORT=${EDITCREDIT_SLURM_PORT:-6817}
CTLD_PORT=$PORT
SLURMD_PORT=$((PORT + 1))
DBD_PORT=$((PORT + 2))
DB_PORT=$((PORT + 3))
CLUSTER=editcredit
ACCOUNT=editcredit
PACKAGES=(munge mariadb-server slurmctld slurmd slurmdbd slurm-client)

STEP="(none)"
log() { printf '[slurm.sh] %s\n' "$*" >&2; }
die() {
  log "FAILED at step '$STEP': $*"
  exit 1
}
step() {
  STEP=$1
  log "$1"
}

mkdir -p "$STATE"
STATE=$(cd "$STATE" && pwd)
CONF=$STATE/etc/slurm.conf
export SLURM_CONF=$CONF
MUNGE_SOCKET=$STATE/munge/munge.socket.2
DB_SOCKET=$STATE/mysql.sock
NODE=$(hostname -s)

# pid of a daemon from its pid file, empty when it is not running
alive() {
  local pidfile=$STATE/run/$1.pid pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2
  shift 2
  for _ in $(seq 1 "$((secs * 4))"); do
    if timeout 10 "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.25
  done
  die "$what did not happen within ${secs}s"
}

install_packages() {
  local missing=()
  for pkg in "${PACKAGES[@]}"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return
  step "installing ${missing[*]}"
  [ "$(id -u)" -eq 0 ] || die "run as root to install packages"
  apt-get update -qq || die "apt-get update"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >"$STATE/log/apt.log" 2>&1 || die "apt-get install (see $STATE/log/apt.log)"
}

write_configs() {
  step "writing $STATE/etc/slurm.conf and slurmdbd.conf"
  # this host's CPUs, boards, sockets, cores, threads and memory, as slurmd sees them
  local hw
  hw=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //') || die "slurmd -C"
  [ -s "$STATE/etc/db.pass" ] || head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$STATE/etc/db.pass"
  cat >"$CONF.new" <<EOF
# written by dev/slurm.sh: a one-node cluster for testing cluster submission
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
# for slurmdbd, the munge socket is given here (not by AuthInfo)
AccountingStoragePass=$MUNGE_SOCKET
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
ReturnToService=2
MinJobAge=300
NodeName=$NODE NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$CONF.new" "$CONF"
  link_system_conf
  (
    umask 077
    cat >"$STATE/etc/slurmdbd.conf" <<EOF
# written by dev/slurm.sh
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$STATE/run/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$(cat "$STATE/etc/db.pass")
StorageLoc=slurm_acct_db
EOF
  )
  chmod 600 "$STATE/etc/slurmdbd.conf"
}

# Inside a job, Snakemake's slurm-jobstep executor calls srun without SLURM_CONF (it drops the
# SLURM_* variables), so srun reads the default /etc/slurm/slurm.conf: a link to ours, made only
# where the machine has no slurm.conf of its own, removed by `stop`.
SYSTEM_CONF=${EDITCREDIT_SLURM_SYSTEM_CONF:-/etc/slurm/slurm.conf}
# A link this script made for a cluster whose daemons are all gone (a machine restarted, a test
# session killed before `stop`) is stale: it is replaced, with a line in the log.
stale_system_link() {
  [ -L "$SYSTEM_CONF" ] || return 1
  local target other name pid
  target=$(readlink "$SYSTEM_CONF")
  if [ -e "$target" ]; then
    head -n 1 "$target" | grep -q '^# written by dev/slurm.sh' || return 1
  fi
  other=$(dirname "$(dirname "$target")")
  for name in slurmctld slurmd slurmdbd munged mariadbd; do
    [ -s "$other/run/$name.pid" ] || continue
    pid=$(cat "$other/run/$name.pid")
    if kill -0 "$pid" 2>/dev/null; then return 1; fi
  done
  return 0
}

link_system_conf() {
  if [ -L "$SYSTEM_CONF" ] && [ "$(readlink "$SYSTEM_CONF")" = "$CONF" ]; then return; fi
  if stale_system_link; then
    log "replacing the stale link $SYSTEM_CONF -> $(readlink "$SYSTEM_CONF") (no daemon of that cluster runs)"
    rm -f "$SYSTEM_CONF"
  fi
  if [ -e "$SYSTEM_CONF" ] || [ -L "$SYSTEM_CONF" ]; then
    die "$SYSTEM_CONF exists (another cluster's, or another state directory's: $(readlink "$SYSTEM_CONF" || true)); stop that one or move it aside"
  fi
  mkdir -p "$(dirname "$SYSTEM_CONF")"
  ln -s "$CONF" "$SYSTEM_CONF" || die "linking $SYSTEM_CONF to $CONF"
}

unlink_system_conf() {
  if [ -L "$SYSTEM_CONF" ] && [ "$(readlink "$SYSTEM_CONF")" = "$CONF" ]; then rm -f "$SYSTEM_CONF"; fi
}

start_munge() {
  [ -n "$(alive munged)" ] && return
  step "starting munged"
  [ -s "$STATE/munge/munge.key" ] || mungekey --create --keyfile="$STATE/munge/munge.key" \
    || die "mungekey --create"
  chmod 700 "$STATE/munge"
  chmod 400 "$STATE/munge/munge.key"
  munged --force --socket="$MUNGE_SOCKET" --key-file="$STATE/munge/munge.key" \
    --pid-file="$STATE/run/munged.pid" --log-file="$STATE/log/munged.log" \
    --seed-file="$STATE/munge/munged.seed" || die "munged (see $STATE/log/munged.log)"
  wait_for 20 "a munge credential round trip" \
    sh -c "munge -n -S '$MUNGE_SOCKET' | unmunge -S '$MUNGE_SOCKET'"
}

DB=(mariadb --no-defaults --socket="$DB_SOCKET" -u root)

start_mariadb() {
  if [ -z "$(alive mariadbd)" ]; then
    if [ ! -d "$STATE/mysql/mysql" ]; then
      step "initialising MariaDB in $STATE/mysql"
      mariadb-install-db --no-defaults --datadir="$STATE/mysql" --user=root \
        --auth-root-authentication-method=socket --skip-test-db >"$STATE/log/mariadb-install.log" 2>&1 \
        || die "mariadb-install-db (see $STATE/log/mariadb-install.log)"
    fi
    step "starting mariadbd on 127.0.0.1:$DB_PORT"
    setsid nohup mariadbd --no-defaults --datadir="$STATE/mysql" --socket="$DB_SOCKET" --port="$DB_PORT" \
      --bind-address=127.0.0.1 --skip-name-resolve --user=root --pid-file="$STATE/run/mariadbd.pid" \
      --log-error="$STATE/log/mariadb.log" --innodb-buffer-pool-size=128M \
      --innodb-lock-wait-timeout=900 >/dev/null 2>&1 &
    wait_for 60 "mariadbd answering on $DB_SOCKET (see $STATE/log/mariadb.log)" "${DB[@]}" -e 'select 1'
  fi
  step "granting the accounting database to user slurm"
  "${DB[@]}" -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$(cat "$STATE/etc/db.pass")';
         GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;" \
    || die "mariadb: create user slurm"
}

start_slurmdbd() {
  if [ -z "$(alive slurmdbd)" ]; then
    step "starting slurmdbd on 127.0.0.1:$DBD_PORT"
    slurmdbd || die "slurmdbd (see $STATE/log/slurmdbd.log)"
  fi
  wait_for 60 "slurmdbd answering sacctmgr (see $STATE/log/slurmdbd.log)" sacctmgr -n list cluster
  if ! sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER"; then
    step "registering cluster $CLUSTER"
    sacctmgr -i add cluster "$CLUSTER" >/dev/null || die "sacctmgr add cluster"
  fi
}

start_slurmctld() {
  [ -n "$(alive slurmctld)" ] && return
  step "starting slurmctld on 127.0.0.1:$CTLD_PORT"
  slurmctld || die "slurmctld (see $STATE/log/slurmctld.log)"
  wait_for 60 "slurmctld answering scontrol ping (see $STATE/log/slurmctld.log)" \
    sh -c 'scontrol ping | grep -q UP'
}

start_slurmd() {
  [ -n "$(alive slurmd)" ] && return
  step "starting slurmd for node $NODE"
  slurmd -N "$NODE" || die "slurmd (see $STATE/log/slurmd.log)"
}

register_user() {
  local user
  user=$(id -un)
  if ! sacctmgr -n -P list account format=account | grep -qx "$ACCOUNT"; then
    step "registering account $ACCOUNT"
    sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" >/dev/null || die "sacctmgr add account"
  fi
  if ! sacctmgr -n -P list assoc user="$user" account="$ACCOUNT" format=user | grep -qx "$user"; then
    step "registering user $user in account $ACCOUNT"
    sacctmgr -i add user "$user" account="$ACCOUNT" defaultaccount="$ACCOUNT" >/dev/null \
      || die "sacctmgr add user"
  fi
}

wait_idle() {
  step "waiting for node $NODE to be idle"
  for _ in $(seq 1 240); do
    local state
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
    case $state in
      idle | mixed | allocated) return ;;
      down* | drain* | fail*) scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
    esac
    sleep 0.25
  done
  die "node $NODE is '$(sinfo -h -n "$NODE" -o %T 2>&1)' after 60s (see $STATE/log/slurmd.log)"
}

start() {
  mkdir -p "$STATE"/{etc,run,log,munge,ctld,spool}
  install_packages
  write_configs
  start_munge
  start_mariadb
  start_slurmdbd
  start_slurmctld
  start_slurmd
  register_user
  wait_idle
  log "up: $(sinfo -h -o '%P %D %T %c CPUs %m MB' | head -1)"
  echo "export SLURM_CONF=$CONF"
}

stop_one() {
  local name=$1 pid
  pid=$(alive "$name")
  [ -n "$pid" ] || return 0
  log "stopping $name (pid $pid)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 120); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$STATE/run/$name.pid"; return 0; }
    sleep 0.25
  done
  log "$name (pid $pid) did not stop within 30s: SIGKILL"
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$STATE/run/$name.pid"
}

stop() {
  if [ -n "$(alive slurmctld)" ]; then
    local jobs
    jobs=$(squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      log "cancelling jobs $(echo "$jobs" | tr '\n' ' ')"
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      for _ in $(seq 1 40); do
        [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
        sleep 0.25
      done
    fi
  fi
  for name in slurmd slurmctld slurmdbd mariadbd munged; do stop_one "$name"; done
  unlink_system_conf
}

status() {
  local name pid
  for name in munged mariadbd slurmdbd slurmctld slurmd; do
    pid=$(alive "$name")
    printf '%-10s %s\n' "$name" "${pid:-not running}"
  done
  if [ -n "$(alive slurmctld)" ]; then sinfo; fi
}

# Sourced (by the tests of its functions), it defines them and does nothing else.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    *)
      echo "usage: dev/slurm.sh start|stop|status|env" >&2
      exit 2
      ;;
  esac
fi
