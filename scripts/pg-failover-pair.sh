#!/usr/bin/env bash
# A Postgres primary with a synchronous streaming standby on one machine, and its fail-over (issue #31):
# what the failover test (e2e/failover.spec.ts) runs the portal on. Debian's PostgreSQL binaries, run as
# the OS user postgres; every commit on the primary waits until the standby has it (synchronous_commit on,
# synchronous_standby_names), so a commit the portal acknowledged survives the primary's loss.
#
#   scripts/pg-failover-pair.sh start      # primary on the first port, standby on the second, both with the portal's roles
#   scripts/pg-failover-pair.sh failover   # the primary dies (immediate stop), the standby is promoted and takes writes
#   scripts/pg-failover-pair.sh urls       # DATABASE_URL and DATABASE_TENANT_URL for the portal (multi-host, target_session_attrs=primary)
#   scripts/pg-failover-pair.sh stop
#
# Settings: PGPAIR_DIR (default /tmp/portal-pg-pair), PGPAIR_PORTS ("5441 5442"). A centre runs the same
# with Patroni (and etcd) deciding the promotion: docs/deploy.md "Postgres fail-over".
set -euo pipefail

DIR="${PGPAIR_DIR:-/tmp/portal-pg-pair}"
read -r PORT_A PORT_B <<<"${PGPAIR_PORTS:-5441 5442}"
BIN="/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -n 1)/bin"

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

start() {
  [ -x "$BIN/initdb" ] || { echo "[pg-pair] no PostgreSQL server binaries in $BIN (apt-get install postgresql)" >&2; exit 1; }
  stop >/dev/null 2>&1 || true
  rm -rf "$DIR"
  mkdir -p "$DIR"
  chown postgres "$DIR" 2>/dev/null || true
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
  psql_on "$PORT_A" -c "CREATE ROLE portal LOGIN CREATEDB CREATEROLE NOSUPERUSER NOBYPASSRLS" \
    -c "CREATE ROLE portal_authenticator LOGIN NOINHERIT NOSUPERUSER NOBYPASSRLS" \
    -c "CREATE DATABASE portal OWNER portal"
  # The standby: a copy of the primary that streams its WAL, named b so the primary can wait for it.
  as_postgres "$BIN/pg_basebackup" -D "$DIR/b" -R -X stream -c fast -d "host=127.0.0.1 port=$PORT_A user=postgres application_name=b" >"$DIR/basebackup.log" 2>&1
  echo "port = $PORT_B" >>"$DIR/b/postgresql.conf"
  as_postgres "$BIN/pg_ctl" -D "$DIR/b" -l "$DIR/b.log" -w -t 60 start >/dev/null
  # Only now is every commit made to wait for b (b's own copy of the settings never waits for anyone).
  psql_on "$PORT_A" -c "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (b)'" -c "SELECT pg_reload_conf()" >/dev/null
  for _ in $(seq 1 60); do
    [ "$(psql_on "$PORT_A" -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'b'")" = sync ] && break
    sleep 0.5
  done
  [ "$(psql_on "$PORT_A" -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'b'")" = sync ] || { echo "[pg-pair] the standby did not become synchronous" >&2; tail -n 20 "$DIR/b.log" >&2; exit 1; }
  echo "[pg-pair] primary 127.0.0.1:$PORT_A, synchronous standby 127.0.0.1:$PORT_B (data in $DIR)"
}

failover() {
  # The primary's machine is lost: no shutdown checkpoint, connections cut.
  as_postgres "$BIN/pg_ctl" -D "$DIR/a" -m immediate -w stop >/dev/null
  as_postgres "$BIN/pg_ctl" -D "$DIR/b" -w -t 60 promote >/dev/null
  # Alone now: commits must not wait for a standby that is gone (Patroni does the same on promotion).
  psql_on "$PORT_B" -c "ALTER SYSTEM SET synchronous_standby_names = ''" -c "SELECT pg_reload_conf()" >/dev/null
  echo "[pg-pair] 127.0.0.1:$PORT_A stopped; 127.0.0.1:$PORT_B promoted and takes writes"
}

stop() {
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
