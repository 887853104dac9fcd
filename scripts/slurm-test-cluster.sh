#!/usr/bin/env bash
# slurm-test-cluster.sh - the project's single-machine Slurm 22.05 (Debian 12) test cluster, run as root.
#   munged + slurmdbd (on the machine's MariaDB) + slurmctld + 2 slurmd (n1 with 4 fake GPUs of type h100, n2 of type b200)
#   + slurmrestd (JWT, REST v0.0.38 + dbv0.0.38 on 127.0.0.1:6820), accounts for the contract suite.
#
# Usage: scripts/slurm-test-cluster.sh start | stop | stop-daemon <name> | status | env
#   start        idempotent: installs missing packages, starts whatever daemon is missing (state kept),
#                returns once both nodes are idle and REST (slurm + slurmdb) answers; prints the env file
#   stop         stops every daemon it started (pid files), drops the database slurm_acct_db (after a purge
#                job ids restart at 1 and would collide with old accounting records) and deletes the runtime dir
#   stop-daemon  slurmrestd | slurmctld | slurmdbd | slurmd | munged: stops only that one (outage tests);
#                `start` brings it back with its state (jobs queued in slurmctld survive)
#   status       which daemons run
#   env          prints the env file's path
# Runtime dir: ${SLURM_TEST_DIR:-<repo>/.slurm-test} (a link to /var/lib/portal-slurm-test/… when the
# checkout lies under a folder the daemons' users cannot enter). Fixed ports: slurmctld 6817, slurmd 17001-17002,
# slurmdbd 6819, slurmrestd 127.0.0.1:6820; MariaDB 127.0.0.1:3306 (root, empty password).
# Adapted from the recipe in the issue #11 notes (Slurm 22.05.8-4+deb12u3).
set -euo pipefail

SCRIPT=$(readlink -f "$0")
REPO=$(dirname "$(dirname "$SCRIPT")")
D=$(readlink -m "${SLURM_TEST_DIR:-$REPO/.slurm-test}")
NODES=2
CPUS_PER_NODE=8     # advertised (config_overrides): more than the machine has, so queued tests do not serialise
GPUS_PER_NODE=4
MEM_PER_NODE=8192
CLUSTER=ci
PARTITION=gpu
ACCOUNT=contract-account
JOB_USER=portal
ADMIN_USER=portaladmin
REST_DAEMON_USER=slurmrest
REST_PORT=6820
REST_URL=http://127.0.0.1:$REST_PORT
CTLD_PORT=6817
SLURMD_PORT_BASE=17001
DBD_PORT=6819
DB_HOST=127.0.0.1
DB_PORT=3306
DB_USER=root
DB_NAME=slurm_acct_db
PKGS="munge slurm-wlm slurm-client slurmrestd slurm-wlm-jwt-plugin slurmdbd slurm-wlm-mysql-plugin"
HOST=$(hostname -s)
export SLURM_CONF=$D/etc/slurm.conf
# A CLI started with SLURM_JWT set switches to JWT auth (sbatch as root then fails with "Invalid user id").
unset SLURM_JWT

now() { date +%s.%N; }
T0=$(now)
secs() { printf '%.2f' "$(echo "$(now) - $1" | bc)"; }
log() { printf '[slurm-test-cluster %6ss] %s\n' "$(secs "$T0")" "$*"; }
die() { echo "slurm-test-cluster: ERROR: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "must run as root"; }

# alive <pid>: exists and is not a zombie (without systemd, PID 1 reaps stopped daemons lazily)
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
# running <pidfile> <comm>: the pid file names a live process with that command name
running() {
  local p
  [ -s "$1" ] && p=$(cat "$1") && alive "$p" && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ]
}
wait_for() { # wait_for <seconds> <description> <command...>
  local t=$1 what=$2; shift 2
  local end=$(( $(date +%s) + t ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || die "timeout (${t}s) waiting for $what"
    sleep 0.2
  done
}
# Two GPU types, as a centre with two generations has: n1 "h100" (with the node feature nvlink), n2 "b200".
gpu_type() { if [ "$1" = 1 ]; then echo h100; else echo b200; fi; }
node_features() { if [ "$1" = 1 ]; then echo nvlink; else echo pcie; fi; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
db() { mariadb --no-defaults -h "$DB_HOST" -P "$DB_PORT" -u "$DB_USER" "$@"; }

# pid file and command name of each daemon; slurmd has one pid file per node
pidfile() {
  case $1 in
    munged) echo "$D/munge/munged.pid" ;;
    slurmdbd | slurmctld | slurmrestd) echo "$D/run/$1.pid" ;;
    slurmd-n*) echo "$D/run/$1.pid" ;;
    *) return 1 ;;
  esac
}
DAEMONS_START_ORDER="munged slurmdbd slurmctld $(for i in $(seq 1 $NODES); do printf 'slurmd-n%s ' "$i"; done)slurmrestd"

# stop_one <name>: SIGTERM the daemon named by its pid file, wait up to 15 s, then SIGKILL
stop_one() {
  local name=$1 comm=${1%%-*} pf p t
  pf=$(pidfile "$name")
  [ -s "$pf" ] || return 0
  p=$(cat "$pf")
  if alive "$p" && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$comm" ]; then
    t=$(now); kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 1 150); do alive "$p" || break; sleep 0.1; done
    if alive "$p"; then echo "  $name ($p) did not exit, SIGKILL"; kill -KILL "$p" 2>/dev/null || true; fi
    echo "stopped $name (pid $p) in $(secs "$t")s"
  fi
  rm -f "$pf"
}

# mint_token <user> <lifespan>: a JWT for the REST checks (slurmctld signs it)
mint_token() { scontrol token username="$1" lifespan="$2" | sed 's/^SLURM_JWT=//'; }
# rest_ok <path> <user> <token>: 200 and no `errors` entry except 9003 "Nothing found".
# /slurmdb/v0.0.38/diag (admin only) is the cheap slurmdbd check: /config takes 1.4 s here.
rest_ok() {
  curl -sf --max-time 20 -H "X-SLURM-USER-NAME: $2" -H "X-SLURM-USER-TOKEN: $3" "$REST_URL$1" \
    | jq -e '[(.errors // [])[] | select(.error_number != 9003)] | length == 0' >/dev/null
}

# ================================================================= start
install_packages() {
  local missing="" p t
  for p in $PKGS curl jq bc mariadb-client; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing="$missing $p"
  done
  [ -n "$missing" ] || return 0
  t=$(now)
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
  # the Debian packages enable their daemons; without systemd nothing starts them, but a system munged
  # started by the package's init script would not clash anyway (ours has its own socket)
  log "packages installed in $(secs "$t")s"
}

create_users() {
  id "$REST_DAEMON_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$REST_DAEMON_USER"
  id "$JOB_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$JOB_USER"
  id "$ADMIN_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$ADMIN_USER"
}

# The daemons run as their own users (munge, slurm, slurmrest) and the jobs as theirs: each must reach the
# runtime folder through every folder above it. A checkout under a folder others cannot enter (root's home,
# `mktemp -d`, both 0700) would fail with "Failed to check logfile … Permission denied"; then the state
# lives under /var/lib/portal-slurm-test/<hash of the checkout's path>, and <repo>/.slurm-test links to it.
reachable_by_others() {
  local p=$1
  while [ "$p" != / ]; do
    p=$(dirname "$p")
    [ "$(( 0$(stat -c %a "$p") & 01 ))" = 1 ] || return 1
  done
}

place_runtime_dir() {
  [ -z "${SLURM_TEST_DIR:-}" ] || return 0
  reachable_by_others "$D" && return 0
  local link="$REPO/.slurm-test" target
  target=/var/lib/portal-slurm-test/$(printf '%s' "$REPO" | sha1sum | cut -c1-12)
  log "$(dirname "$D") is closed to the daemons' users: the cluster's state goes to $target ($link links to it)"
  mkdir -p "$target"; chmod 0755 /var/lib/portal-slurm-test "$target"
  if [ -d "$link" ] && [ ! -L "$link" ]; then rm -rf "$link"; fi
  ln -sfn "$target" "$link"
  D=$target
  export SLURM_CONF=$D/etc/slurm.conf
}

prepare_dirs() {
  local i g f
  mkdir -p "$D"/{etc,run,log,state/ctld,fakegpu,jobs,munge}
  chmod 0755 "$D"
  chown slurm:slurm "$D/log" "$D/run" "$D/state/ctld"
  chown munge:munge "$D/munge"; chmod 0755 "$D/munge"
  chown "$JOB_USER:$JOB_USER" "$D/jobs"; chmod 1777 "$D/jobs"
  for i in $(seq 1 $NODES); do mkdir -p "$D/state/d/n$i"; done
  if [ ! -s "$D/munge/munge.key" ]; then
    dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
  fi
  chown munge:munge "$D/munge/munge.key"; chmod 0600 "$D/munge/munge.key"
  if [ ! -s "$D/state/jwt_hs256.key" ]; then
    dd if=/dev/urandom of="$D/state/jwt_hs256.key" bs=32 count=1 status=none
  fi
  chown slurm:slurm "$D/state/jwt_hs256.key"; chmod 0600 "$D/state/jwt_hs256.key"
  # Fake GPUs: file-less GPUs are dropped and plain files give an empty CUDA_VISIBLE_DEVICES;
  # symlinks to /dev/null stat() as character devices, so indexes and CUDA_VISIBLE_DEVICES work.
  for g in $(seq 0 $((GPUS_PER_NODE - 1))); do
    f=$D/fakegpu/nvidia$g
    [ -L "$f" ] || { rm -f "$f"; ln -s /dev/null "$f"; }
  done
}

write_configs() {
  cat > "$D/etc/slurm.conf.new" <<EOF
# generated by scripts/slurm-test-cluster.sh
ClusterName=$CLUSTER
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$D/state/jwt_hs256.key
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT_BASE
StateSaveLocation=$D/state/ctld
SlurmdSpoolDir=$D/state/d/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# without it a job gets the whole node's memory and jobs serialise
DefMemPerCPU=256
SchedulerType=sched/backfill
# the default delay of 3 s drains queues at one scheduling pass every 3 s
SchedulerParameters=batch_sched_delay=0
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
# the munge socket for the slurmdbd connection comes from here, not from AuthInfo
AccountingStoragePass=$D/munge/munge.socket
AccountingStorageTRES=gres/gpu
# budgets enforced by Slurm: association limits (GrpTRESMins) that never decay nor reset
AccountingStorageEnforce=associations,limits,safe
PriorityType=priority/multifactor
PriorityDecayHalfLife=0
PriorityUsageResetPeriod=NONE
JobCompType=jobcomp/filetxt
JobCompLoc=$D/log/jobcomp.txt
GresTypes=gpu
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# slurmctld forgets a finished job after a minute (production: 300 or more), so the tier that proves the
# portal then finds it in slurmdbd waits one minute, not five
MinJobAge=60
# job arrays: the portal allows task indexes up to 99,999 (core/jobs/array.ts MAX_ARRAY_INDEX); Slurm's
# default (1001) refuses any index above 1000. MaxJobCount (default 10000) counts each started task.
MaxArraySize=100000
# advertise more CPUs and memory than the machine has, without the nodes draining
SlurmdParameters=config_overrides
$(for i in $(seq 1 $NODES); do
  echo "NodeName=n$i NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((SLURMD_PORT_BASE + i - 1)) CPUs=$CPUS_PER_NODE Sockets=1 CoresPerSocket=$CPUS_PER_NODE ThreadsPerCore=1 RealMemory=$MEM_PER_NODE Gres=gpu:$(gpu_type "$i"):$GPUS_PER_NODE Features=$(node_features "$i") State=UNKNOWN"
done)
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
# one partition per GPU type, over the same nodes (classes that ask for a type, QoS, feature or reservation)
$(for i in $(seq 1 $NODES); do echo "PartitionName=$(gpu_type "$i") Nodes=n$i MaxTime=INFINITE State=UP"; done)
EOF
  CONF_CHANGED=0
  if [ -f "$D/etc/slurm.conf" ] && ! cmp -s "$D/etc/slurm.conf.new" "$D/etc/slurm.conf"; then CONF_CHANGED=1; fi
  mv "$D/etc/slurm.conf.new" "$D/etc/slurm.conf"
  cat > "$D/etc/gres.conf" <<EOF
AutoDetect=off
$(for i in $(seq 1 $NODES); do echo "NodeName=n$i Name=gpu Type=$(gpu_type "$i") File=$D/fakegpu/nvidia[0-$((GPUS_PER_NODE - 1))]"; done)
EOF
  # slurmd initialises the cgroup plugin even with proctrack/linuxproc; IgnoreSystemd avoids dbus on cgroup v2
  cat > "$D/etc/cgroup.conf" <<EOF
CgroupPlugin=autodetect
IgnoreSystemd=yes
EOF
  # slurmdbd.conf: owned by slurm, 0600; StoragePass left out (an empty 'StoragePass=' is a parse error)
  cat > "$D/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$D/state/jwt_hs256.key
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=slurm
StorageType=accounting_storage/mysql
StorageHost=$DB_HOST
StoragePort=$DB_PORT
StorageUser=$DB_USER
StorageLoc=$DB_NAME
LogFile=$D/log/slurmdbd.log
PidFile=$D/run/slurmdbd.pid
DebugLevel=info
EOF
  chown slurm:slurm "$D/etc/slurmdbd.conf"; chmod 0600 "$D/etc/slurmdbd.conf"
}

start_mariadb() {
  if ! db -e 'select 1' >/dev/null 2>&1; then
    # the machine's MariaDB (not ours to stop: `stop` leaves it running)
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
    wait_for 60 "MariaDB on $DB_HOST:$DB_PORT" db -e 'select 1'
    log "MariaDB started"
  fi
}

start_munged() {
  if ! running "$(pidfile munged)" munged; then
    setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged \
      --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
      --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" --seed-file="$D/munge/munged.seed" \
      </dev/null
  fi
  wait_for 15 munged bash -c "munge -S '$D/munge/munge.socket' -n | unmunge -S '$D/munge/munge.socket'"
  log "munged up"
}

start_slurmdbd() {
  local t
  t=$(now)
  running "$(pidfile slurmdbd)" slurmdbd || /usr/sbin/slurmdbd </dev/null   # reads slurmdbd.conf next to $SLURM_CONF
  wait_for 60 slurmdbd port_open $DBD_PORT
  wait_for 30 sacctmgr sacctmgr -n show cluster
  grep -qw "$CLUSTER" <<<"$(sacctmgr -n -P show cluster format=cluster)" || sacctmgr -i add cluster "$CLUSTER" >/dev/null
  log "slurmdbd up ($(secs "$t")s)"
}

start_slurmctld() {
  local t
  t=$(now)
  if running "$(pidfile slurmctld)" slurmctld; then
    [ "$CONF_CHANGED" = 1 ] && { scontrol reconfigure >/dev/null 2>&1 || true; }
  else
    /usr/sbin/slurmctld -f "$SLURM_CONF" </dev/null
  fi
  wait_for 30 slurmctld bash -c "scontrol ping | grep -q 'is UP'"
  log "slurmctld up ($(secs "$t")s)"
}

# accounts: the contract suite submits to $ACCOUNT as $JOB_USER (root too, for sbatch -A from root);
# $ADMIN_USER is AdminLevel=Admin for the budget writes over REST
setup_accounts() {
  local t have u missing added=0
  t=$(now)
  # one query on an idempotent run: each sacctmgr call costs 0.3-0.5 s on this machine
  have=$(sacctmgr -n -P show user withassoc format=account,user,adminlevel)
  if ! grep -q "^$ACCOUNT|" <<<"$have"; then
    # "Nothing new added" (already there) is not an error here; the check below is
    sacctmgr -i add account "$ACCOUNT" description=contract-suite organization=ci >/dev/null || true
    added=1
  fi
  missing=""
  for u in "$JOB_USER" root "$ADMIN_USER"; do grep -q "^$ACCOUNT|$u|" <<<"$have" || missing="$missing,$u"; done
  if [ -n "$missing" ]; then
    sacctmgr -i add user "${missing#,}" account="$ACCOUNT" >/dev/null || true
    added=1
  fi
  # the job user's first account becomes its default account
  if ! grep -qx "$ACCOUNT|$ADMIN_USER|Administrator" <<<"$have"; then
    sacctmgr -i modify user "$ADMIN_USER" set adminlevel=Admin >/dev/null || true
    added=1
  fi
  if [ "$added" = 1 ]; then
    have=$(sacctmgr -n -P show user withassoc format=account,user,adminlevel)
    for u in "$JOB_USER" root "$ADMIN_USER"; do
      grep -q "^$ACCOUNT|$u|" <<<"$have" || die "association $ACCOUNT/$u missing: $have"
    done
    grep -qx "$ACCOUNT|$ADMIN_USER|Administrator" <<<"$have" || die "$ADMIN_USER is not Administrator: $have"
  fi
  log "accounts ready ($(secs "$t")s)"
}

start_slurmd() {
  local i t bad
  t=$(now)
  for i in $(seq 1 $NODES); do
    running "$(pidfile "slurmd-n$i")" slurmd || /usr/sbin/slurmd -f "$SLURM_CONF" -N "n$i" </dev/null
  done
  # nodes left DRAIN/DOWN by an earlier run are resumed (ReturnToService does not clear admin reasons)
  for _ in 1 2 3 4 5; do
    all_idle && break
    sleep 0.5
    bad=$(sinfo -h -N -n "n[1-$NODES]" -o '%N %T' | awk '$2 ~ /drain|down|fail/ {print $1}' | paste -sd, -)
    [ -z "$bad" ] || scontrol update nodename="$bad" state=resume >/dev/null 2>&1 || true
  done
  wait_for 60 "nodes idle" all_idle
  log "$NODES nodes idle ($(secs "$t")s): $(sinfo -h -o '%P %a %D %T %G' | tr '\n' ' ')"
}
# all_idle: every node is idle, or busy with jobs (mixed/allocated) that survived a restart
all_idle() {
  [ "$(sinfo -h -N -n "n[1-$NODES]" -o '%N %T' | sort -u | grep -cE ' (idle|mixed|allocated)$')" = "$NODES" ]
}

start_slurmrestd() {
  local t token admin_token
  t=$(now)
  touch "$D/log/slurmrestd.log"; chown "$REST_DAEMON_USER" "$D/log/slurmrestd.log"
  if ! running "$(pidfile slurmrestd)" slurmrestd; then
    # slurmrestd refuses root and SlurmUser; SLURM_JWT=daemon, else it rejects every token.
    # The pid file gets the daemon's own pid (exec), so `stop` can check /proc/PID/comm.
    setsid bash -c "echo \$\$ > '$D/run/slurmrestd.pid'; exec setpriv --reuid=$REST_DAEMON_USER --regid=$REST_DAEMON_USER --init-groups \
      env SLURM_CONF='$SLURM_CONF' SLURM_JWT=daemon /usr/sbin/slurmrestd -a rest_auth/jwt \
      -s openapi/v0.0.38,openapi/dbv0.0.38 127.0.0.1:$REST_PORT" \
      </dev/null >>"$D/log/slurmrestd.log" 2>&1 &
  fi
  token=$(mint_token "$JOB_USER" 600)
  admin_token=$(mint_token "$ADMIN_USER" 600)
  [ -n "$token" ] && [ -n "$admin_token" ] || die "scontrol token failed"
  wait_for 30 "REST /slurm/v0.0.38/ping" rest_ok /slurm/v0.0.38/ping "$JOB_USER" "$token"
  wait_for 30 "REST /slurmdb/v0.0.38/diag" rest_ok /slurmdb/v0.0.38/diag "$ADMIN_USER" "$admin_token"
  log "slurmrestd answers ($(secs "$t")s)"
}

write_env() {
  cat > "$D/env.sh" <<EOF
# written by $SCRIPT start
export SLURM_CONF=$SLURM_CONF
export SLURM_REST_URL=$REST_URL
export SLURM_REST_USER=$JOB_USER
# HS256 key shared with slurmctld/slurmdbd (mint {exp,iat,sun} tokens); readable by root only.
# Deliberately no SLURM_JWT: Slurm CLIs switch to JWT auth when it is set.
export SLURM_JWT_KEY_FILE=$D/state/jwt_hs256.key
export SLURM_ADMIN_USER=$ADMIN_USER
export SLURM_CLUSTER=$CLUSTER
export SLURM_PARTITIONS=h100=$PARTITION
export SLURM_JOB_DIR=$D/jobs
export SLURM_JOB_LAUNCHER=none
export SLURM_TEST_SCRIPT=$SCRIPT
EOF
  chmod 0644 "$D/env.sh"
}

# One test cluster per machine (fixed ports): the folder of the running one is noted here, so a start
# from another folder (a fresh CI clone) stops the one a previous checkout left behind.
MARKER=/run/portal-slurm-test-cluster.dir

stop_other_cluster() {
  local other p
  [ -f "$MARKER" ] || return 0
  other=$(cat "$MARKER")
  [ -n "$other" ] && [ "$other" != "$D" ] || return 0
  echo "the test cluster of $other holds the ports: stopping it"
  if [ -d "$other" ]; then SLURM_TEST_DIR="$other" "$SCRIPT" stop || true; fi
  # whatever is left of it (its folder deleted under it)
  for p in /proc/[0-9]*; do
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF "$other/" || continue
    kill -TERM "${p#/proc/}" 2>/dev/null || true
  done
  rm -f "$MARKER"
  sleep 1
}

cmd_start() {
  need_root
  install_packages
  T0=$(now)   # timings below exclude package installation
  place_runtime_dir
  stop_other_cluster
  create_users
  local fresh=0
  [ -d "$D/state/ctld" ] || fresh=1
  prepare_dirs
  write_configs
  if [ "$CONF_CHANGED" = 1 ] && running "$(pidfile slurmctld)" slurmctld; then
    # slurmctld cannot add or alter nodes on reconfigure: restart the daemons (state kept)
    echo "slurm.conf changed: restarting the running daemons"
    stop_daemons
  fi
  start_mariadb
  # A new state folder restarts job ids at 1: accounting left from an earlier cluster would collide.
  if [ "$fresh" = 1 ]; then db -e "DROP DATABASE IF EXISTS $DB_NAME"; fi
  start_munged
  start_slurmdbd
  start_slurmctld
  setup_accounts
  start_slurmd
  start_slurmrestd
  write_env
  echo "$D" >"$MARKER"
  cat <<EOF

Slurm test cluster ready ($(sinfo -V)) in $(secs "$T0")s
  nodes    : n[1-$NODES] x $CPUS_PER_NODE CPUs, $MEM_PER_NODE MB, gpu:<type>:$GPUS_PER_NODE (fake; n1 h100 + feature nvlink, n2 b200); partition $PARTITION (all), h100 (n1), b200 (n2)
  REST     : $REST_URL (openapi/v0.0.38, openapi/dbv0.0.38), headers X-SLURM-USER-NAME / X-SLURM-USER-TOKEN
  accounts : $ACCOUNT (users $JOB_USER, root, $ADMIN_USER); admin $ADMIN_USER
  logs     : $D/log/
  env file : $D/env.sh
EOF
}

# ================================================================= stop
cancel_jobs() {
  local jobs
  if [ -f "$SLURM_CONF" ] && grep -q 'is UP' <<<"$(timeout 10 scontrol ping 2>/dev/null)"; then
    jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    if [ -n "${jobs// }" ]; then
      echo "cancelling jobs: $jobs"
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      sleep 2
    fi
  fi
}

stop_daemons() {
  local i d
  stop_one slurmrestd
  for i in $(seq 1 $NODES); do stop_one "slurmd-n$i"; done
  # job step daemons of this cluster left behind (they inherit SLURM_CONF from our slurmd)
  for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] || continue
    grep -qaF "SLURM_CONF=$SLURM_CONF" "$d/environ" 2>/dev/null || continue
    echo "killing leftover slurmstepd ${d#/proc/}"; kill -KILL "${d#/proc/}" 2>/dev/null || true
  done
  stop_one slurmctld
  stop_one slurmdbd
  stop_one munged
}

cmd_stop() {
  need_root
  local t
  t=$(now)
  cancel_jobs
  stop_daemons
  if db -e 'select 1' >/dev/null 2>&1; then
    db -e "DROP DATABASE IF EXISTS $DB_NAME" && echo "dropped database $DB_NAME"
  else
    echo "warning: MariaDB on $DB_HOST:$DB_PORT unreachable, database $DB_NAME not dropped" >&2
  fi
  rm -rf "$D"
  if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$D" ]; then rm -f "$MARKER"; fi
  echo "purged $D ($(secs "$t")s)"
}

cmd_stop_daemon() {
  need_root
  local name=${1:-} i
  case $name in
    slurmrestd | slurmctld | slurmdbd | munged) stop_one "$name" ;;
    slurmd) for i in $(seq 1 $NODES); do stop_one "slurmd-n$i"; done ;;
    slurmd-n[0-9]*) stop_one "$name" ;;
    *) die "stop-daemon: expected slurmrestd, slurmctld, slurmdbd, slurmd or munged, got '$name'" ;;
  esac
}

cmd_status() {
  local name pf state all=0
  for name in $DAEMONS_START_ORDER; do
    pf=$(pidfile "$name")
    if running "$pf" "${name%%-*}"; then state="running (pid $(cat "$pf"))"; else state="stopped"; all=1; fi
    printf '%-12s %s\n' "$name" "$state"
  done
  return $all
}

case ${1:-} in
  start) cmd_start ;;
  stop) cmd_stop ;;
  stop-daemon) shift; cmd_stop_daemon "$@" ;;
  status) cmd_status ;;
  env) echo "$D/env.sh" ;;
  *) echo "usage: $0 start | stop | stop-daemon <slurmrestd|slurmctld|slurmdbd|slurmd|munged> | status | env" >&2; exit 2 ;;
esac
