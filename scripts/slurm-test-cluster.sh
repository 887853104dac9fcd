#!/usr/bin/env bash
# slurm-test-cluster.sh - the project's single-machine Slurm 22.05 (Debian 12) test cluster, run as root.
#   munged + slurmdbd (on the machine's MariaDB) + slurmctld + 2 slurmd (n1 with 4 fake GPUs of type h100, n2 of type b200)
#   + slurmrestd (JWT, REST v0.0.38 + dbv0.0.38 on 127.0.0.1:6820), accounts for the contract suite.
#   A second cluster beside it (two clusters, two sites: docs/slurm.md "Two clusters"): ClusterName ci2, its
#   own slurmctld, one slurmd (m1, 4 fake GPUs of type b200, partition b200) and slurmrestd (127.0.0.1:6821),
#   registered in the same slurmdbd, with the same munged, JWT key, users, accounts and job folder.
#
# Usage: scripts/slurm-test-cluster.sh start | stop | stop-daemon <name> | stop-cluster <1|2> | start-cluster <1|2> | status | env
#   start        idempotent: installs missing packages, starts whatever daemon is missing (state kept),
#                returns once the nodes of both clusters are idle and both REST (slurm + slurmdb) answer;
#                prints the env file
#   stop         stops every daemon it started (pid files), drops the database slurm_acct_db (after a purge
#                job ids restart at 1 and would collide with old accounting records) and deletes the runtime dir
#   stop-daemon  slurmrestd | slurmctld | slurmdbd | slurmd | munged: stops only that one of cluster 1 (outage
#                tests); `start` brings it back with its state (jobs queued in slurmctld survive)
#   stop-cluster 1|2   stops that cluster's slurmctld and slurmrestd (its slurmd, slurmdbd and munged go on)
#   start-cluster 1|2  starts them again (state kept); returns once its nodes are idle and its REST answers
#   status       which daemons run
#   env          prints the env file's path
# Runtime dir: ${SLURM_TEST_DIR:-<repo>/.slurm-test} (a link to /var/lib/portal-slurm-test/… when the
# checkout lies under a folder the daemons' users cannot enter); cluster 2's own files under <runtime>/c2.
# Fixed ports: slurmctld 6817, slurmd 17001-17002, slurmdbd 6819, slurmrestd 127.0.0.1:6820; cluster 2:
# slurmctld 6827, slurmd 17011, slurmrestd 127.0.0.1:6821; MariaDB 127.0.0.1:3306 (root, empty password).
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
# The second cluster (its own slurmctld, slurmd and slurmrestd; the rest shared with cluster 1)
CLUSTER2=ci2
NODES2=1
NODE2_PREFIX=m
GPU2_TYPE=b200
PARTITION2=b200
CTLD2_PORT=6827
SLURMD2_PORT_BASE=17011
REST2_PORT=6821
REST2_URL=http://127.0.0.1:$REST2_PORT
PKGS="munge slurm-wlm slurm-client slurmrestd slurm-wlm-jwt-plugin slurmdbd slurm-wlm-mysql-plugin"
HOST=$(hostname -s)
export SLURM_CONF=$D/etc/slurm.conf
D2=$D/c2
SLURM2_CONF=$D2/etc/slurm.conf
CONF_CHANGED=0
CONF2_CHANGED=0
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
# ctld_up <slurm.conf>: that cluster's slurmctld answers
ctld_up() { grep -q 'is UP' <<<"$(SLURM_CONF=$1 timeout 10 scontrol ping 2>/dev/null)"; }
db() { mariadb --no-defaults -h "$DB_HOST" -P "$DB_PORT" -u "$DB_USER" "$@"; }

# pid file and command name of each daemon; slurmd has one pid file per node; cluster 2's are named c2.<daemon>
pidfile() {
  case $1 in
    munged) echo "$D/munge/munged.pid" ;;
    slurmdbd | slurmctld | slurmrestd) echo "$D/run/$1.pid" ;;
    slurmd-n*) echo "$D/run/$1.pid" ;;
    c2.slurmctld | c2.slurmrestd | c2.slurmd-"$NODE2_PREFIX"*) echo "$D2/run/${1#c2.}.pid" ;;
    *) return 1 ;;
  esac
}
comm_of() { local n=${1#c2.}; echo "${n%%-*}"; }
DAEMONS_START_ORDER="munged slurmdbd slurmctld $(for i in $(seq 1 $NODES); do printf 'slurmd-n%s ' "$i"; done)slurmrestd"
DAEMONS_START_ORDER="$DAEMONS_START_ORDER c2.slurmctld $(for i in $(seq 1 $NODES2); do printf 'c2.slurmd-%s%s ' "$NODE2_PREFIX" "$i"; done)c2.slurmrestd"

# stop_one <name>: SIGTERM the daemon named by its pid file, wait up to 15 s, then SIGKILL
stop_one() {
  local name=$1 comm pf p t
  comm=$(comm_of "$1")
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

# mint_token <user> <lifespan> [slurm.conf]: a JWT for the REST checks (that cluster's slurmctld signs it)
mint_token() { SLURM_CONF=${3:-$SLURM_CONF} scontrol token username="$1" lifespan="$2" | sed 's/^SLURM_JWT=//'; }
# rest_ok <path> <user> <token> [base URL]: 200 and no `errors` entry except 9003 "Nothing found".
# /slurmdb/v0.0.38/diag (admin only) is the cheap slurmdbd check: /config takes 1.4 s here.
rest_ok() {
  curl -sf --max-time 20 -H "X-SLURM-USER-NAME: $2" -H "X-SLURM-USER-TOKEN: $3" "${4:-$REST_URL}$1" \
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
  D2=$D/c2
  SLURM2_CONF=$D2/etc/slurm.conf
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

# slurm_conf_head <cluster> <its runtime dir> <slurmctld port> <first slurmd port>: slurm.conf up to the
# nodes. Both clusters share munged (AuthInfo), the JWT key and slurmdbd; state, pid and log files are their own.
slurm_conf_head() {
  cat <<EOF
# generated by scripts/slurm-test-cluster.sh
ClusterName=$1
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$D/state/jwt_hs256.key
SlurmctldPort=$3
SlurmdPort=$4
StateSaveLocation=$2/state/ctld
SlurmdSpoolDir=$2/state/d/%n
SlurmctldPidFile=$2/run/slurmctld.pid
SlurmdPidFile=$2/run/slurmd-%n.pid
SlurmctldLogFile=$2/log/slurmctld.log
SlurmdLogFile=$2/log/slurmd-%n.log
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
JobCompLoc=$2/log/jobcomp.txt
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
EOF
}

write_configs() {
  { slurm_conf_head "$CLUSTER" "$D" "$CTLD_PORT" "$SLURMD_PORT_BASE"; cat <<EOF; } > "$D/etc/slurm.conf.new"
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

# Cluster 2 under $D2: its own etc (slurm.conf, and the gres.conf and cgroup.conf Slurm reads beside it), run,
# log and state; munge, the JWT key, the fake GPU files and the job folder are cluster 1's.
prepare_dirs2() {
  local i
  mkdir -p "$D2"/{etc,run,log,state/ctld}
  chmod 0755 "$D2"
  chown slurm:slurm "$D2/log" "$D2/run" "$D2/state/ctld"
  for i in $(seq 1 $NODES2); do mkdir -p "$D2/state/d/$NODE2_PREFIX$i"; done
}

write_configs2() {
  { slurm_conf_head "$CLUSTER2" "$D2" "$CTLD2_PORT" "$SLURMD2_PORT_BASE"; cat <<EOF; } > "$D2/etc/slurm.conf.new"
$(for i in $(seq 1 $NODES2); do
  echo "NodeName=$NODE2_PREFIX$i NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((SLURMD2_PORT_BASE + i - 1)) CPUs=$CPUS_PER_NODE Sockets=1 CoresPerSocket=$CPUS_PER_NODE ThreadsPerCore=1 RealMemory=$MEM_PER_NODE Gres=gpu:$GPU2_TYPE:$GPUS_PER_NODE Features=pcie State=UNKNOWN"
done)
PartitionName=$PARTITION2 Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  CONF2_CHANGED=0
  if [ -f "$SLURM2_CONF" ] && ! cmp -s "$D2/etc/slurm.conf.new" "$SLURM2_CONF"; then CONF2_CHANGED=1; fi
  mv "$D2/etc/slurm.conf.new" "$SLURM2_CONF"
  cat > "$D2/etc/gres.conf" <<EOF
AutoDetect=off
$(for i in $(seq 1 $NODES2); do echo "NodeName=$NODE2_PREFIX$i Name=gpu Type=$GPU2_TYPE File=$D/fakegpu/nvidia[0-$((GPUS_PER_NODE - 1))]"; done)
EOF
  cp "$D/etc/cgroup.conf" "$D2/etc/cgroup.conf"
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
  # both clusters, before their slurmctld registers (one slurmdbd holds each under its ClusterName)
  local have c add=""
  have=$(sacctmgr -n -P show cluster format=cluster)
  for c in "$CLUSTER" "$CLUSTER2"; do grep -qx "$c" <<<"$have" || add="$add,$c"; done
  [ -z "$add" ] || sacctmgr -i add cluster "${add#,}" >/dev/null
  log "slurmdbd up ($(secs "$t")s)"
}

# start_ctld <daemon> <slurm.conf> <conf changed> <label>: a cluster's slurmctld, up once it answers a ping
start_ctld() {
  local t
  t=$(now)
  if running "$(pidfile "$1")" slurmctld; then
    [ "$3" = 1 ] && { SLURM_CONF=$2 scontrol reconfigure >/dev/null 2>&1 || true; }
  else
    SLURM_CONF=$2 /usr/sbin/slurmctld -f "$2" </dev/null
  fi
  wait_for 30 "$4" ctld_up "$2"
  log "$4 up ($(secs "$t")s)"
}
start_slurmctld() { start_ctld slurmctld "$SLURM_CONF" "$CONF_CHANGED" slurmctld; }
start_slurmctld2() { start_ctld c2.slurmctld "$SLURM2_CONF" "$CONF2_CHANGED" "slurmctld of $CLUSTER2"; }

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

# The same account and users in cluster 2 (on a new database `start_slurmdbd` added both clusters first,
# and sacctmgr adds to every cluster: then this only checks)
setup_accounts2() {
  local t have u missing="" added=0
  t=$(now)
  have=$(sacctmgr -n -P show assoc where cluster="$CLUSTER2" account="$ACCOUNT" format=account,user)
  if ! grep -qx "$ACCOUNT|" <<<"$have"; then
    sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER2" description=contract-suite organization=ci >/dev/null || true
    added=1
  fi
  for u in "$JOB_USER" root "$ADMIN_USER"; do grep -qx "$ACCOUNT|$u" <<<"$have" || missing="$missing,$u"; done
  if [ -n "$missing" ]; then
    sacctmgr -i add user "${missing#,}" account="$ACCOUNT" cluster="$CLUSTER2" >/dev/null || true
    added=1
  fi
  if [ "$added" = 1 ]; then
    have=$(sacctmgr -n -P show assoc where cluster="$CLUSTER2" account="$ACCOUNT" format=account,user)
    for u in "" "$JOB_USER" root "$ADMIN_USER"; do
      grep -qx "$ACCOUNT|$u" <<<"$have" || die "association $CLUSTER2/$ACCOUNT/$u missing: $have"
    done
  fi
  log "accounts of $CLUSTER2 ready ($(secs "$t")s)"
}

# start_nodes <daemon prefix> <slurm.conf> <node prefix> <count>: a cluster's slurmd, one per node, until all are idle
start_nodes() {
  local pre=$1 conf=$2 node=$3 count=$4 i t bad
  t=$(now)
  for i in $(seq 1 "$count"); do
    running "$(pidfile "$pre$node$i")" slurmd || SLURM_CONF=$conf /usr/sbin/slurmd -f "$conf" -N "$node$i" </dev/null
  done
  # nodes left DRAIN/DOWN by an earlier run are resumed (ReturnToService does not clear admin reasons)
  for _ in 1 2 3 4 5; do
    nodes_idle "$conf" "$node" "$count" && break
    sleep 0.5
    bad=$(SLURM_CONF=$conf sinfo -h -N -n "$node[1-$count]" -o '%N %T' | awk '$2 ~ /drain|down|fail/ {print $1}' | paste -sd, -)
    [ -z "$bad" ] || SLURM_CONF=$conf scontrol update nodename="$bad" state=resume >/dev/null 2>&1 || true
  done
  wait_for 60 "nodes idle ($conf)" nodes_idle "$conf" "$node" "$count"
  log "$count node(s) of $(sed -n 's/^ClusterName=//p' "$conf") idle ($(secs "$t")s): $(SLURM_CONF=$conf sinfo -h -o '%P %a %D %T %G' | tr '\n' ' ')"
}
start_slurmd() { start_nodes slurmd- "$SLURM_CONF" n "$NODES"; }
start_slurmd2() { start_nodes c2.slurmd- "$SLURM2_CONF" "$NODE2_PREFIX" "$NODES2"; }
# nodes_idle <slurm.conf> <node prefix> <count>: every node is idle, or busy with jobs (mixed/allocated) that survived a restart
nodes_idle() {
  [ "$(SLURM_CONF=$1 sinfo -h -N -n "$2[1-$3]" -o '%N %T' | sort -u | grep -cE ' (idle|mixed|allocated)$')" = "$3" ]
}

# start_rest <daemon> <cluster's runtime dir> <slurm.conf> <port> <label>: a cluster's slurmrestd, until it
# answers /slurm/v0.0.38/ping and /slurmdb/v0.0.38/diag
start_rest() {
  local name=$1 dir=$2 conf=$3 port=$4 label=$5 t token admin_token
  t=$(now)
  touch "$dir/log/slurmrestd.log"; chown "$REST_DAEMON_USER" "$dir/log/slurmrestd.log"
  if ! running "$(pidfile "$name")" slurmrestd; then
    # slurmrestd refuses root and SlurmUser; SLURM_JWT=daemon, else it rejects every token.
    # The pid file gets the daemon's own pid (exec), so `stop` can check /proc/PID/comm.
    setsid bash -c "echo \$\$ > '$(pidfile "$name")'; exec setpriv --reuid=$REST_DAEMON_USER --regid=$REST_DAEMON_USER --init-groups \
      env SLURM_CONF='$conf' SLURM_JWT=daemon /usr/sbin/slurmrestd -a rest_auth/jwt \
      -s openapi/v0.0.38,openapi/dbv0.0.38 127.0.0.1:$port" \
      </dev/null >>"$dir/log/slurmrestd.log" 2>&1 &
  fi
  token=$(mint_token "$JOB_USER" 600 "$conf")
  admin_token=$(mint_token "$ADMIN_USER" 600 "$conf")
  [ -n "$token" ] && [ -n "$admin_token" ] || die "scontrol token failed ($label)"
  wait_for 30 "REST /slurm/v0.0.38/ping ($label)" rest_ok /slurm/v0.0.38/ping "$JOB_USER" "$token" "http://127.0.0.1:$port"
  wait_for 30 "REST /slurmdb/v0.0.38/diag ($label)" rest_ok /slurmdb/v0.0.38/diag "$ADMIN_USER" "$admin_token" "http://127.0.0.1:$port"
  log "$label answers ($(secs "$t")s)"
}
start_slurmrestd() { start_rest slurmrestd "$D" "$SLURM_CONF" "$REST_PORT" slurmrestd; }
start_slurmrestd2() { start_rest c2.slurmrestd "$D2" "$SLURM2_CONF" "$REST2_PORT" "slurmrestd of $CLUSTER2"; }

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
# The second cluster (docs/slurm.md "Two clusters"): its own slurmctld and slurmrestd, the same slurmdbd,
# munge and JWT key, users and SLURM_JOB_DIR. Its CLIs: SLURM_CONF=\$SLURM2_CONF sinfo, or sacct -M $CLUSTER2.
export SLURM2_CONF=$SLURM2_CONF
export SLURM2_REST_URL=$REST2_URL
export SLURM2_CLUSTER=$CLUSTER2
export SLURM2_PARTITIONS=$GPU2_TYPE=$PARTITION2
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
  # whatever is left of it (its folder deleted under it): slurmdbd and slurmrestd name no folder on their
  # command line, but their environment (SLURM_CONF) or working folder does
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF "$other/" \
      || tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qF "=$other/" \
      || readlink "$p/cwd" 2>/dev/null | grep -qF "$other"; then
      kill -TERM "${p#/proc/}" 2>/dev/null || true
    fi
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
  prepare_dirs2
  write_configs
  write_configs2
  if [ "$CONF_CHANGED" = 1 ] && running "$(pidfile slurmctld)" slurmctld; then
    # slurmctld cannot add or alter nodes on reconfigure: restart the daemons (state kept)
    echo "slurm.conf changed: restarting the running daemons"
    stop_daemons
  elif [ "$CONF2_CHANGED" = 1 ] && running "$(pidfile c2.slurmctld)" slurmctld; then
    echo "slurm.conf of $CLUSTER2 changed: restarting its daemons"
    stop_daemons2
  fi
  start_mariadb
  # A new state folder restarts job ids at 1: accounting left from an earlier cluster would collide.
  if [ "$fresh" = 1 ]; then db -e "DROP DATABASE IF EXISTS $DB_NAME"; fi
  start_munged
  start_slurmdbd
  start_slurmctld
  start_slurmctld2
  setup_accounts
  setup_accounts2
  start_slurmd
  start_slurmd2
  start_slurmrestd
  start_slurmrestd2
  write_env
  echo "$D" >"$MARKER"
  cat <<EOF

Slurm test cluster ready ($(sinfo -V)) in $(secs "$T0")s
  nodes    : n[1-$NODES] x $CPUS_PER_NODE CPUs, $MEM_PER_NODE MB, gpu:<type>:$GPUS_PER_NODE (fake; n1 h100 + feature nvlink, n2 b200); partition $PARTITION (all), h100 (n1), b200 (n2)
  REST     : $REST_URL (openapi/v0.0.38, openapi/dbv0.0.38), headers X-SLURM-USER-NAME / X-SLURM-USER-TOKEN
  cluster 2: $CLUSTER2, $NODE2_PREFIX[1-$NODES2] gpu:$GPU2_TYPE:$GPUS_PER_NODE, partition $PARTITION2; REST $REST2_URL; same slurmdbd, munge, JWT key ($SLURM2_CONF)
  accounts : $ACCOUNT (users $JOB_USER, root, $ADMIN_USER); admin $ADMIN_USER
  logs     : $D/log/
  env file : $D/env.sh
EOF
}

# ================================================================= stop
cancel_jobs() {
  local jobs conf cancelled=0
  for conf in "$SLURM_CONF" "$SLURM2_CONF"; do
    [ -f "$conf" ] && ctld_up "$conf" || continue
    jobs=$(SLURM_CONF=$conf squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    if [ -n "${jobs// }" ]; then
      echo "cancelling jobs of $(sed -n 's/^ClusterName=//p' "$conf"): $jobs"
      # shellcheck disable=SC2086
      SLURM_CONF=$conf scancel $jobs 2>/dev/null || true
      cancelled=1
    fi
  done
  if [ "$cancelled" = 1 ]; then sleep 2; fi
}

# kill_stepds <slurm.conf>: job step daemons of that cluster left behind (they inherit SLURM_CONF from its slurmd)
kill_stepds() {
  local d
  for d in /proc/[0-9]*; do
    [ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] || continue
    grep -qaF "SLURM_CONF=$1" "$d/environ" 2>/dev/null || continue
    echo "killing leftover slurmstepd ${d#/proc/}"; kill -KILL "${d#/proc/}" 2>/dev/null || true
  done
}

stop_daemons() {
  local i
  stop_daemons2
  stop_one slurmrestd
  for i in $(seq 1 $NODES); do stop_one "slurmd-n$i"; done
  kill_stepds "$SLURM_CONF"
  stop_one slurmctld
  stop_one slurmdbd
  stop_one munged
}

# cluster 2's own daemons (munged and slurmdbd are cluster 1's)
stop_daemons2() {
  local i
  stop_one c2.slurmrestd
  for i in $(seq 1 $NODES2); do stop_one "c2.slurmd-$NODE2_PREFIX$i"; done
  kill_stepds "$SLURM2_CONF"
  stop_one c2.slurmctld
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

# stop-cluster <1|2>: that cluster's slurmctld and slurmrestd (a cluster away: its REST refuses connections)
cmd_stop_cluster() {
  need_root
  case ${1:-} in
    1) stop_one slurmrestd; stop_one slurmctld ;;
    2) stop_one c2.slurmrestd; stop_one c2.slurmctld ;;
    *) die "stop-cluster: expected 1 or 2, got '${1:-}'" ;;
  esac
}

# start-cluster <1|2>: brings them back (state kept), without touching configs or the other cluster
cmd_start_cluster() {
  need_root
  local which=${1:-}
  case $which in 1 | 2) ;; *) die "start-cluster: expected 1 or 2, got '$which'" ;; esac
  [ -f "$SLURM_CONF" ] && [ -f "$SLURM2_CONF" ] || die "no test cluster in $D: run start first"
  start_munged
  running "$(pidfile slurmdbd)" slurmdbd || start_slurmdbd
  if [ "$which" = 1 ]; then
    start_slurmctld; start_slurmd; start_slurmrestd
  else
    start_slurmctld2; start_slurmd2; start_slurmrestd2
  fi
}

cmd_status() {
  local name pf state all=0
  for name in $DAEMONS_START_ORDER; do
    pf=$(pidfile "$name")
    if running "$pf" "$(comm_of "$name")"; then state="running (pid $(cat "$pf"))"; else state="stopped"; all=1; fi
    printf '%-15s %s\n' "$name" "$state"
  done
  return $all
}

case ${1:-} in
  start) cmd_start ;;
  stop) cmd_stop ;;
  stop-daemon) shift; cmd_stop_daemon "$@" ;;
  stop-cluster) shift; cmd_stop_cluster "$@" ;;
  start-cluster) shift; cmd_start_cluster "$@" ;;
  status) cmd_status ;;
  env) echo "$D/env.sh" ;;
  *) echo "usage: $0 start | stop | stop-daemon <slurmrestd|slurmctld|slurmdbd|slurmd|munged> | stop-cluster <1|2> | start-cluster <1|2> | status | env" >&2; exit 2 ;;
esac
