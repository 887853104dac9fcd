#!/usr/bin/env bash
# A load-balanced portal on one machine (issue #31): two web processes (scripts/server.mjs, as `npm start`,
# without a worker of their own) and one worker process (`npm run worker`) on one Postgres, behind Debian's
# haproxy, which checks each web process on /api/health and sends requests round-robin to the healthy ones.
# The layout a centre runs across hosts (docs/deploy.md "Behind a load balancer"); the browser tests race
# 1,000 submissions through it (e2e/ha.spec.ts).
#
#   DATABASE_URL=postgres://… [DATABASE_TENANT_URL=…] scripts/ha-stack.sh start   # needs a build (npm run build)
#   scripts/ha-stack.sh status | stop
#
# Settings: HA_DIR (state, logs, haproxy.cfg; default .ha), HA_PORT (the balancer, 8080), HA_WEB_PORTS (the
# web processes, "3101 3102"), HA_STATS_PORT (haproxy's stats as CSV at /stats;csv, 8404). Every other
# variable (PORTAL_*, SCHEDULER, SLURM_*) reaches the portal's processes as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

HA_DIR="${HA_DIR:-.ha}"
HA_PORT="${HA_PORT:-8080}"
HA_WEB_PORTS="${HA_WEB_PORTS:-3101 3102}"
HA_STATS_PORT="${HA_STATS_PORT:-8404}"
mkdir -p "$HA_DIR/log"
HA_DIR="$(cd "$HA_DIR" && pwd)"

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

status() {
  local ok=0
  for port in $HA_WEB_PORTS; do
    if pid_alive "$HA_DIR/web-$port.pid"; then echo "web $port: running (pid $(cat "$HA_DIR/web-$port.pid"))"; else echo "web $port: stopped"; ok=1; fi
  done
  if pid_alive "$HA_DIR/worker.pid"; then echo "worker: running (pid $(cat "$HA_DIR/worker.pid"))"; else echo "worker: stopped"; ok=1; fi
  if pid_alive "$HA_DIR/haproxy.pid"; then echo "haproxy: running on 127.0.0.1:$HA_PORT (pid $(cat "$HA_DIR/haproxy.pid"))"; else echo "haproxy: stopped"; ok=1; fi
  return $ok
}

stop_one() {
  local file="$1"
  if pid_alive "$file"; then
    local pid; pid="$(cat "$file")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

stop() {
  stop_one "$HA_DIR/haproxy.pid"
  for port in $HA_WEB_PORTS; do stop_one "$HA_DIR/web-$port.pid"; done
  stop_one "$HA_DIR/worker.pid"
  echo "stopped"
}

wait_healthy() {
  local url="$1" what="$2"
  for _ in $(seq 1 240); do
    if curl -fsS -o /dev/null --max-time 2 "$url"; then return 0; fi
    sleep 0.5
  done
  echo "[ha] $what did not answer $url within 2 minutes; its log:" >&2
  return 1
}

start() {
  if [ -z "${DATABASE_URL:-}" ]; then
    echo "[ha] DATABASE_URL must name a Postgres: several processes share it (the embedded PGlite is one process's)" >&2
    exit 1
  fi
  if ! command -v haproxy >/dev/null 2>&1; then
    echo "[ha] haproxy is missing: apt-get install haproxy" >&2
    exit 1
  fi
  if [ ! -f .next/BUILD_ID ]; then
    echo "[ha] no build: run npm run build first" >&2
    exit 1
  fi
  status >/dev/null 2>&1 && { echo "[ha] already running"; status; return 0; }
  stop >/dev/null

  # The worker first: it migrates a fresh database (the web processes wait on the same lock and find it done).
  PORTAL_INSTANCE=worker nohup node --import tsx scripts/worker.ts >"$HA_DIR/log/worker.log" 2>&1 &
  echo $! >"$HA_DIR/worker.pid"
  local servers=""
  local n=0
  for port in $HA_WEB_PORTS; do
    n=$((n + 1))
    PORTAL_WORKER=off PORTAL_INSTANCE="web$n" PORTAL_TRUST_PROXY=true NODE_ENV=production \
      nohup node scripts/server.mjs -p "$port" -H 127.0.0.1 >"$HA_DIR/log/web-$port.log" 2>&1 &
    echo $! >"$HA_DIR/web-$port.pid"
    servers="$servers
  server web$n 127.0.0.1:$port check maxconn 64"
  done

  # When no web process can answer (all failing their health check, e.g. while the database fails over),
  # haproxy's own answer is the portal's: 503 with Retry-After and the API's error shape, never a bare 502/504.
  local body='{"error":{"code":"SERVICE_UNAVAILABLE","message":"The portal cannot answer right now (it may be switching to its standby database). Try again in 5 seconds; a submission sent again with the same Idempotency-Key will not run twice."}}'
  printf 'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncache-control: no-store\r\nretry-after: 5\r\ncontent-length: %s\r\nconnection: close\r\n\r\n%s' "${#body}" "$body" >"$HA_DIR/unavailable.http"

  cat >"$HA_DIR/haproxy.cfg" <<EOF
# Written by scripts/ha-stack.sh: the portal's web processes behind one address.
global
  log stdout format raw local0 notice
  maxconn 4096

defaults
  mode http
  log global
  option httplog
  option forwardfor
  option redispatch
  # A request is sent again to another process only when it never reached the first (connection refused):
  # a POST that reached a process is never repeated by the balancer; the client's Idempotency-Key is the retry.
  retries 2
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  timeout queue 30s
  errorfile 502 $HA_DIR/unavailable.http
  errorfile 503 $HA_DIR/unavailable.http
  errorfile 504 $HA_DIR/unavailable.http

frontend portal
  bind 127.0.0.1:$HA_PORT
  default_backend web

backend web
  balance roundrobin
  # Readiness: the database alone (a scheduler outage must not take every process out). Checked every second
  # with up to 3 s to answer on a loaded machine; two failures take a process out, one success brings it back.
  option httpchk GET /api/health?ready
  http-check expect status 200
  timeout check 3s
  default-server inter 1s fall 2 rise 1
  # Which process answered, for the tests and an operator's curl -i.
  http-response set-header X-Portal-Server %s
$servers

listen stats
  bind 127.0.0.1:$HA_STATS_PORT
  stats enable
  stats uri /stats
  stats refresh 5s
EOF
  haproxy -c -q -f "$HA_DIR/haproxy.cfg"
  nohup haproxy -f "$HA_DIR/haproxy.cfg" -db >"$HA_DIR/log/haproxy.log" 2>&1 &
  echo $! >"$HA_DIR/haproxy.pid"

  for port in $HA_WEB_PORTS; do
    wait_healthy "http://127.0.0.1:$port/api/health" "web process $port" || { tail -n 30 "$HA_DIR/log/web-$port.log" >&2; exit 1; }
  done
  wait_healthy "http://127.0.0.1:$HA_PORT/api/health" "haproxy" || { tail -n 30 "$HA_DIR/log/haproxy.log" >&2; exit 1; }
  echo "[ha] the portal answers on http://127.0.0.1:$HA_PORT (web processes on $HA_WEB_PORTS, one worker; logs in $HA_DIR/log)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: scripts/ha-stack.sh start|status|stop" >&2
    exit 2
    ;;
esac
