#!/usr/bin/env bash
# A Postgres primary with a synchronous standby on one machine, and its fail-over (issue #31): what the
# failover test (e2e/failover.spec.ts) runs the portal on. Debian's PostgreSQL binaries, run as the OS user
# postgres; every commit on the primary waits until the standby has it (synchronous replication), so a
# commit the portal acknowledged survives the primary's loss.
#
# Managed by Patroni with etcd (Debian's patroni and etcd-server) when both are installed, as a centre runs
# it: Patroni bootstraps the primary, clones the standby, keeps it synchronous (synchronous_mode) and
# promotes it when the primary's leader key expires. Without them (PGPAIR_MANAGER=manual) a plain streaming
# standby that this script promotes.
#
#   scripts/pg-failover-pair.sh start      # primary on the first port, standby on the second, both with the portal's roles
#   scripts/pg-failover-pair.sh failover   # the primary's machine is lost (Patroni and Postgres killed); returns once the standby takes writes
#   scripts/pg-failover-pair.sh urls       # DATABASE_URL and DATABASE_TENANT_URL for the portal (multi-host, target_session_attrs=primary)
#   scripts/pg-failover-pair.sh stop
#
# Settings: PGPAIR_DIR (default /tmp/portal-pg-pair), PGPAIR_PORTS ("5441 5442"; Patroni's REST API on each
# port + 100, etcd on the first + 200 and + 201), PGPAIR_MANAGER (patroni | manual; default patroni when installed).
set -euo pipefail

DIR="${PGPAIR_DIR:-/tmp/portal-pg-pair}"
read -r PORT_A PORT_B <<<"${PGPAIR_PORTS:-5441 5442}"
BIN="/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -n 1)/bin"
if [ -z "${PGPAIR_MANAGER:-}" ]; then
  if command -v patroni >/dev/null 2>&1 && command -v etcd >/dev/null 2>&1; then PGPAIR_MANAGER=patroni; else PGPAIR_MANAGER=manual; fi
fi
ETCD_CLIENT=$((PORT_A + 200))
ETCD_PEER=$((PORT_A + 201))

as_postgres() {
  if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}
psql_on() { local port="$1"; shift; psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt "$@"; }

urls() {
  local hosts="127.0.0.1:$PORT_A,127.0.0.1:$PORT_B"
  # target_session_attrs=primary: postgres.js tells a standby by in_hot_standby (its read-write test reads
  # default_transaction_read_only, which a hot standby reports off), so it connects only to the one that takes writes.
  echo "DATABASE_URL=postgres://portal@$hosts/portal?target_session_attrs=primary"
  echo "DATABASE_TENANT_URL=postgres://portal_authenticator@$hosts/portal?target_session_attrs=primary"
}

# The roles and database of the portal, on the primary (the standby gets them by replication).
create_portal_roles() {
  psql_on "$1" -c "CREATE ROLE portal LOGIN CREATEDB CREATEROLE NOSUPERUSER NOBYPASSRLS" \
    -c "CREATE ROLE portal_authenticator LOGIN NOINHERIT NOSUPERUSER NOBYPASSRLS" \
    -c "CREATE DATABASE portal OWNER portal"
}

b_is_sync() { [ "$(psql_on "$PORT_A" -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'b'" 2>/dev/null)" = sync ]; }
b_takes_writes() { [ "$(psql_on "$PORT_B" -c "SELECT pg_is_in_recovery()" 2>/dev/null)" = f ]; }
a_leads() { curl -fsS -o /dev/null "http://127.0.0.1:$((PORT_A + 100))/primary" 2>/dev/null; }
etcd_answers() { curl -fsS -o /dev/null "http://127.0.0.1:$ETCD_CLIENT/health" 2>/dev/null; }

wait_for() {
  local what="$1" seconds="$2"; shift 2
  for _ in $(seq 1 $((seconds * 2))); do "$@" && return 0; sleep 0.5; done
  echo "[pg-pair] $what did not happen within $seconds s" >&2
  return 1
}

patroni_config() {
  local node="$1" port="$2"
  cat <<EOF
scope: portal
name: $node
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$((port + 100))
  connect_address: 127.0.0.1:$((port + 100))
etcd3:
  hosts: 127.0.0.1:$ETCD_CLIENT
bootstrap:
  dcs:
    # The leader key lives 12 s: a lost primary is replaced within about that. loop_wait + 2 × retry_timeout ≤ ttl.
    ttl: 12
    loop_wait: 1
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: false
      parameters:
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 5
        max_replication_slots: 5
        wal_log_hints: "on"
        max_connections: 200
  initdb:
    - encoding: UTF8
    - auth: trust
  pg_hba:
    - local all all trust
    - host replication postgres 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: $DIR/$node
  bin_dir: $BIN
  pgpass: $DIR/pgpass-$node
  # The standby's clone starts at once (a spread checkpoint would make it wait minutes).
  basebackup:
    - checkpoint: fast
  authentication:
    replication:
      username: postgres
    superuser:
      username: postgres
  parameters:
    unix_socket_directories: $DIR
EOF
}

start_patroni() {
  command -v patroni >/dev/null 2>&1 && command -v etcd >/dev/null 2>&1 || { echo "[pg-pair] PGPAIR_MANAGER=patroni needs patroni and etcd (apt-get install patroni etcd-server)" >&2; exit 1; }
  as_postgres bash -c "nohup etcd --name pair --data-dir '$DIR/etcd' --listen-client-urls http://127.0.0.1:$ETCD_CLIENT --advertise-client-urls http://127.0.0.1:$ETCD_CLIENT \
    --listen-peer-urls http://127.0.0.1:$ETCD_PEER --initial-advertise-peer-urls http://127.0.0.1:$ETCD_PEER --initial-cluster pair=http://127.0.0.1:$ETCD_PEER >'$DIR/etcd.log' 2>&1 & echo \$! >'$DIR/etcd.pid'"
  wait_for "etcd to answer" 30 etcd_answers || { tail -n 20 "$DIR/etcd.log" >&2; exit 1; }
  for node in a b; do
    local port; port=$([ $node = a ] && echo "$PORT_A" || echo "$PORT_B")
    patroni_config "$node" "$port" >"$DIR/$node.yml"
    chown postgres "$DIR/$node.yml" 2>/dev/null || true
  done
  as_postgres bash -c "nohup patroni '$DIR/a.yml' >'$DIR/patroni-a.log' 2>&1 & echo \$! >'$DIR/patroni-a.pid'"
  wait_for "a to lead" 60 a_leads || { tail -n 30 "$DIR/patroni-a.log" >&2; exit 1; }
  create_portal_roles "$PORT_A"
  as_postgres bash -c "nohup patroni '$DIR/b.yml' >'$DIR/patroni-b.log' 2>&1 & echo \$! >'$DIR/patroni-b.pid'"
  wait_for "b to become the synchronous standby" 90 b_is_sync || { tail -n 30 "$DIR/patroni-b.log" >&2; exit 1; }
  echo "[pg-pair] Patroni: primary 127.0.0.1:$PORT_A, synchronous standby 127.0.0.1:$PORT_B (etcd 127.0.0.1:$ETCD_CLIENT; data in $DIR)"
}

start() {
  [ -x "$BIN/initdb" ] || { echo "[pg-pair] no PostgreSQL server binaries in $BIN (apt-get install postgresql)" >&2; exit 1; }
  stop >/dev/null 2>&1 || true
  rm -rf "$DIR"
  mkdir -p "$DIR"
  chown postgres "$DIR" 2>/dev/null || true
  if [ "$PGPAIR_MANAGER" = patroni ]; then start_patroni; return; fi
  as_postgres "$BIN/initdb" -D "$DIR/a" -U postgres --auth=trust -E UTF8 >"$DIR/initdb.log" 2>&1
  cat >>"$DIR/a/postgresql.conf" <<EOF
port = $PORT_A
listen_addresses = '127.0.0.1'
unix_socket_directories = '$DIR'
wal_level = replica
max_wal_senders = 5
hot_standby = on
synchronous_commit = on
wal_log_hints = on
max_connections = 200
EOF
  as_postgres "$BIN/pg_ctl" -D "$DIR/a" -l "$DIR/a.log" -w -t 60 start >/dev/null
  create_portal_roles "$PORT_A"
  # The standby: a copy of the primary that streams its WAL, named b so the primary can wait for it.
  as_postgres "$BIN/pg_basebackup" -D "$DIR/b" -R -X stream -c fast -d "host=127.0.0.1 port=$PORT_A user=postgres application_name=b" >"$DIR/basebackup.log" 2>&1
  echo "port = $PORT_B" >>"$DIR/b/postgresql.conf"
  as_postgres "$BIN/pg_ctl" -D "$DIR/b" -l "$DIR/b.log" -w -t 60 start >/dev/null
  # Only now is every commit made to wait for b (b's own copy of the settings never waits for anyone).
  psql_on "$PORT_A" -c "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (b)'" -c "SELECT pg_reload_conf()" >/dev/null
  wait_for "b to become the synchronous standby" 30 b_is_sync || { tail -n 20 "$DIR/b.log" >&2; exit 1; }
  echo "[pg-pair] primary 127.0.0.1:$PORT_A, synchronous standby 127.0.0.1:$PORT_B (data in $DIR)"
}

failover() {
  if [ "$PGPAIR_MANAGER" = patroni ]; then
    # The primary's machine is lost: its Patroni and its Postgres die at once; Patroni on b promotes b once a's leader key expires.
    [ -f "$DIR/patroni-a.pid" ] && kill -KILL "$(cat "$DIR/patroni-a.pid")" 2>/dev/null || true
    as_postgres "$BIN/pg_ctl" -D "$DIR/a" -m immediate -w stop >/dev/null 2>&1 || true
    wait_for "b to be promoted" 60 b_takes_writes || { tail -n 30 "$DIR/patroni-b.log" >&2; exit 1; }
    echo "[pg-pair] 127.0.0.1:$PORT_A lost; Patroni promoted 127.0.0.1:$PORT_B"
    return
  fi
  # The primary's machine is lost: no shutdown checkpoint, connections cut.
  as_postgres "$BIN/pg_ctl" -D "$DIR/a" -m immediate -w stop >/dev/null
  as_postgres "$BIN/pg_ctl" -D "$DIR/b" -w -t 60 promote >/dev/null
  # Alone now: commits must not wait for a standby that is gone (Patroni does the same on promotion).
  psql_on "$PORT_B" -c "ALTER SYSTEM SET synchronous_standby_names = ''" -c "SELECT pg_reload_conf()" >/dev/null
  echo "[pg-pair] 127.0.0.1:$PORT_A stopped; 127.0.0.1:$PORT_B promoted and takes writes"
}

stop() {
  for node in a b; do
    if [ -f "$DIR/patroni-$node.pid" ]; then
      local pid; pid="$(cat "$DIR/patroni-$node.pid")"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
      rm -f "$DIR/patroni-$node.pid"
    fi
  done
  if [ -f "$DIR/etcd.pid" ]; then kill -TERM "$(cat "$DIR/etcd.pid")" 2>/dev/null || true; rm -f "$DIR/etcd.pid"; fi
  for node in a b; do
    if [ -f "$DIR/$node/postmaster.pid" ]; then as_postgres "$BIN/pg_ctl" -D "$DIR/$node" -m fast -w stop >/dev/null 2>&1 || true; fi
  done
  echo "[pg-pair] stopped"
}

case "${1:-}" in
  start) start ;;
  failover) failover ;;
  urls) urls ;;
  stop) stop ;;
  *)
    echo "usage: scripts/pg-failover-pair.sh start|failover|urls|stop" >&2
    exit 2
    ;;
esac
