/**
 * Interactive sessions' proxy benchmark (issue #28): what the portal's proxy at `/sessions/<job id>/`
 * adds to an app's HTTP requests and WebSocket messages, and what 50 open sessions cost the server.
 * Writes the section "## Interactive sessions: the proxy" of BENCHMARKS.md.
 *
 * The production build runs as `npm start` runs it (`scripts/server.mjs`: Next.js with the proxy in
 * front, one Node process, the portal's worker running) on a fresh database of the local Postgres (demo
 * mode, so the demo centre is seeded), its workspaces (PORTAL_FILES_DIR) in a temp folder. This process
 * plays the session's app — an HTTP server answering a small JSON body and a WebSocket echo, as a
 * Jupyter kernel's channel is — and the browser: the demo PI (pi@uni.example) signs in through
 * next-auth's credentials flow, and the sessions are job rows of the PI's project inserted as the
 * reconciler leaves a running session (kind `interactive`, RUNNING, node `node-a`), each with its
 * `connection.json` naming the app's port and a secret of its own. Then, in one run:
 *   a. HTTP: N GETs one after another on a kept-alive connection, each through the proxy (with the
 *      session's cookie) and directly to the app (with the secret), alternating, so both see the same
 *      moment of the machine: p50/p99 of each and of the difference;
 *   b. WebSocket: N messages, each sent and its echo awaited, through the proxy and directly,
 *      alternating: p50/p99 of the round trip;
 *   c. 50 sessions: 50 WebSockets through the proxy, one per session, each sending a message a second
 *      (spread over the second) for S seconds; the server process's CPU (utime + stime from
 *      /proc/PID/stat) and RSS sampled every second, after an idle minute's tenth with the sockets
 *      closed; start, peak and end, and the round trips meanwhile;
 *   d. a 32 MiB download through the proxy and directly, five of each alternating (the secret mask sees
 *      every byte), and the mask alone over the same bytes in this process.
 *
 *   npm run bench:sessions -- [--requests 2000] [--messages 2000] [--sessions 50] [--seconds 60]
 *                             [--port 3212] [--rebuild | --no-build] [--webpack] [--database-url URL]
 *                             [--keep] [--no-write]
 *
 * The build in .next is reused when it is newer than the sources (as bench:http). The database
 * `portal_bench_<random>` and the temp folder are removed at the end — also after a failure or Ctrl-C —
 * unless --keep. Run it through npm (or `node --import tsx`), not the `tsx` wrapper.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { WebSocket, WebSocketServer } from 'ws';
import { SESSION_FOLDER } from '~/server/core/files/paths';
import { jobDirOf, workspaceOf } from '~/server/services/files/workspace';
import { intFlag, serverBenchFlags, UsageError, type ServerBenchFlags } from './args';
import { atInterrupt, createBenchDatabase, describeServer, wasInterrupted, type BenchDatabase } from './database';
import { Session } from './http-client';
import { ensureBuild, startServer, type PortalServer } from './http-server';
import { SecretMask } from '~/server/api/sessions-headers';
import { loadAverage, machine, writeSection } from './markdown';
import { cpuSecondsOf } from './proc-cpu';
import { ascending, median, num, quantile } from './stats';

const SECTION = '## Interactive sessions: the proxy';
const PI = 'pi@uni.example';
const DEMO_PASSWORD = 'demo-password';
const PROJECT_TITLE = 'Protein structure prediction';
const SITE = 'de-jena';
const NODE = 'node-a';
const WARM_UP = 200;
const BIG_BYTES = 32 * 1024 * 1024;
const IDLE_SECONDS = 10;
const MiB = 1024 * 1024;
/** The simulated cluster's speed the server runs with: the sessions' last traffic is written every 30 s of its time. */
const SIM_SPEED = 60;
const SEEN_EVERY_S = Math.max(1, 30 / SIM_SPEED);

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Options extends ServerBenchFlags {
  requests: number;
  messages: number;
  sessions: number;
  seconds: number;
}

function options(): Options {
  return {
    ...serverBenchFlags(3212),
    requests: intFlag('--requests', 2000),
    messages: intFlag('--messages', 2000),
    sessions: intFlag('--sessions', 50),
    seconds: intFlag('--seconds', 60),
  };
}

// ---- the session's app -------------------------------------------------------------------------

/** A body the size of a Jupyter API answer (a kernel's or a folder's JSON). */
const SMALL_BODY = JSON.stringify({ name: 'python3', execution_state: 'idle', connections: 1, padding: 'x'.repeat(1500) });
const BIG_BODY = Buffer.alloc(BIG_BYTES, 'abcdefghijklmnopqrstuvwxyz0123456789');

/** startApp runs the stand-in for Jupyter: a small JSON answer, `…/big` 32 MiB, and a WebSocket echo. */
async function startApp(): Promise<{ port: number; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    if (req.url?.endsWith('/big')) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG_BYTES });
      res.end(BIG_BODY);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(SMALL_BODY) });
    res.end(SMALL_BODY);
  });
  server.keepAliveTimeout = 60_000;
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (socket) => socket.on('message', (data, binary) => socket.send(data, { binary })));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => requests,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((done) => wss.close(() => done()));
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

// ---- the server process ------------------------------------------------------------------------

/** processTree is a process and its descendants (/proc/PID/task/TID/children). */
function processTree(pid: number): number[] {
  const out = [pid];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)) out.push(...processTree(Number(child)));
    }
  } catch {
    // gone
  }
  return out;
}

/** rssMiB is the resident memory of the processes together. */
function rssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      const line = readFileSync(`/proc/${pid}/status`, 'utf8')
        .split('\n')
        .find((l) => l.startsWith('VmRSS:'));
      kib += line ? Number(line.split(/\s+/)[1]) : 0;
    } catch {
      // gone
    }
  }
  return kib / 1024;
}

interface Sample {
  /** Seconds since the sampling started. */
  at: number;
  /** CPU of the server since the sample before, % of one core. */
  cpu: number;
  rss: number;
}

/** sampleServer samples the server's CPU and RSS every second until the returned stop is called. */
function sampleServer(pid: number): () => Sample[] {
  const pids = processTree(pid);
  const samples: Sample[] = [];
  const t0 = performance.now();
  let lastCpu = cpuSecondsOf(pids);
  let lastAt = t0;
  samples.push({ at: 0, cpu: Number.NaN, rss: rssMiB(pids) });
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = cpuSecondsOf(pids);
    samples.push({ at: (now - t0) / 1000, cpu: ((cpu - lastCpu) / ((now - lastAt) / 1000)) * 100, rss: rssMiB(pids) });
    lastCpu = cpu;
    lastAt = now;
  }, 1000);
  return () => {
    clearInterval(timer);
    return samples;
  };
}

// ---- clients -----------------------------------------------------------------------------------

/** get makes one GET on a kept-alive agent and reads the whole answer; the time in ms. */
function get(agent: http.Agent, url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; bytes: number }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const req = http.get(url, { agent, headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => done({ ms: performance.now() - t0, status: res.statusCode ?? 0, bytes }));
      res.on('error', fail);
    });
    req.on('error', fail);
  });
}

/** connect opens a WebSocket and waits until it is open. */
function connect(url: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((done, fail) => {
    const socket = new WebSocket(url, { headers, perMessageDeflate: false });
    socket.once('open', () => done(socket));
    socket.once('unexpected-response', (_req, res) => fail(new Error(`${url}: HTTP ${res.statusCode} instead of a WebSocket`)));
    socket.once('error', fail);
  });
}

/** roundTrip sends a message and waits for its echo; the time in ms. */
function roundTrip(socket: WebSocket, message: string): Promise<number> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const onMessage = (data: Buffer) => {
      if (data.toString('utf8') !== message) return;
      socket.off('message', onMessage);
      done(performance.now() - t0);
    };
    socket.on('message', onMessage);
    socket.send(message, (error) => error && fail(error));
  });
}

// ---- the run -----------------------------------------------------------------------------------

interface SessionRow {
  jobId: string;
  secret: string;
}

interface Pairs {
  direct: number[];
  proxied: number[];
  added: number[];
}

interface Soak {
  idle: Sample[];
  busy: Sample[];
  sent: number;
  echoed: number;
  roundTrips: number[];
  errors: number;
  seenWritten: number;
}

/** insertSessions adds `count` running sessions of the PI's project and writes each one's connection.json. */
async function insertSessions(databaseUrl: string, filesDir: string, projectId: string, appPort: number, count: number): Promise<SessionRow[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    const [who] = await sql<{ userId: string; orgId: string }[]>`select u.id as "userId", p.org_id as "orgId" from users u, projects p where lower(u.email) = ${PI} and p.id = ${projectId}`;
    const [allocation] = await sql<{ id: string }[]>`select id from allocations where project_id = ${projectId} and unit = 'gpu_seconds' order by status = 'active' desc limit 1`;
    if (!who || !allocation) throw new Error(`no user ${PI} or no GPU-hour allocation of project ${projectId}`);
    const roots = { rootOf: (site: string) => join(filesDir, site) };
    const rows: SessionRow[] = [];
    for (let i = 0; i < count; i++) {
      const jobId = randomUUID();
      const secret = randomBytes(32).toString('base64url');
      await sql`insert into jobs (id, org_id, project_id, allocation_id, user_id, idempotency_key, name, kind, resource_class_id, site_id, gpus, nodes, walltime_seconds, image, command, env, state, reserved_amount, reserved_unit, cents_per_gpu_hour, started_at, node_list, app, idle_timeout_seconds)
        values (${jobId}, ${who.orgId}, ${projectId}, ${allocation.id}, ${who.userId}, ${randomUUID()}, ${`notebook ${i + 1}`}, 'interactive', 'h100', ${SITE}, 1, 1, 86400, 'jupyter', 'portal-session jupyter', '{}'::jsonb, 'RUNNING', 86400, 'gpu_seconds', 180, now(), ${sql.json([NODE])}, 'jupyter', 86400)`;
      const dir = join(jobDirOf(workspaceOf(roots, SITE, projectId), jobId), SESSION_FOLDER);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, 'connection.json');
      writeFileSync(file, JSON.stringify({ host: NODE, port: appPort, secret, basePath: `/sessions/${jobId}/` }), { mode: 0o600 });
      chmodSync(file, 0o600);
      rows.push({ jobId, secret });
    }
    return rows;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** alternate runs `n` pairs (direct, then proxied, or the other way round every second pair) after a warm-up. */
async function alternate(n: number, direct: () => Promise<number>, proxied: () => Promise<number>): Promise<Pairs> {
  for (let i = 0; i < WARM_UP; i++) {
    await direct();
    await proxied();
  }
  const out: Pairs = { direct: [], proxied: [], added: [] };
  for (let i = 0; i < n; i++) {
    // Which goes first alternates, so neither always meets the connection or the machine freshly woken.
    let d: number;
    let x: number;
    if (i % 2 === 0) {
      d = await direct();
      x = await proxied();
    } else {
      x = await proxied();
      d = await direct();
    }
    out.direct.push(d);
    out.proxied.push(x);
    out.added.push(x - d);
  }
  return out;
}

async function httpLatency(o: Options, base: string, appPort: number, cookie: string, row: SessionRow): Promise<Pairs> {
  const proxyAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const directAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const path = `/sessions/${row.jobId}/api/kernels`;
  const check = (r: { status: number; bytes: number; ms: number }, what: string) => {
    if (r.status !== 200 || r.bytes !== Buffer.byteLength(SMALL_BODY)) throw new Error(`${what}: HTTP ${r.status}, ${r.bytes} bytes`);
    return r.ms;
  };
  try {
    return await alternate(
      o.requests,
      async () => check(await get(directAgent, `http://127.0.0.1:${appPort}${path}`, { authorization: `token ${row.secret}` }), 'direct GET'),
      async () => check(await get(proxyAgent, `${base}${path}`, { cookie }), 'proxied GET'),
    );
  } finally {
    proxyAgent.destroy();
    directAgent.destroy();
  }
}

async function wsLatency(o: Options, base: string, appPort: number, cookie: string, row: SessionRow): Promise<Pairs> {
  const path = `/sessions/${row.jobId}/api/kernels/k1/channels`;
  const proxied = await connect(`${base.replace('http:', 'ws:')}${path}`, { cookie, origin: base });
  const direct = await connect(`ws://127.0.0.1:${appPort}${path}`, { authorization: `token ${row.secret}` });
  let n = 0;
  const message = () => JSON.stringify({ header: { msg_id: `m${++n}`, msg_type: 'execute_request' }, content: { code: '1 + 1' } });
  try {
    return await alternate(o.messages, () => roundTrip(direct, message()), () => roundTrip(proxied, message()));
  } finally {
    proxied.close();
    direct.close();
  }
}

async function download(base: string, appPort: number, cookie: string, row: SessionRow): Promise<{ directMs: number; proxiedMs: number; maskMiBs: number }> {
  const agent = new http.Agent({ keepAlive: false });
  const path = `/sessions/${row.jobId}/files/big`;
  const take = (r: { ms: number; bytes: number }) => {
    if (r.bytes !== BIG_BYTES) throw new Error(`download: ${r.bytes} bytes of ${BIG_BYTES}`);
    return r.ms;
  };
  try {
    const direct: number[] = [];
    const proxied: number[] = [];
    // Alternating, five of each: the machine is shared, a single run says little.
    for (let i = 0; i < 5; i++) {
      direct.push(take(await get(agent, `http://127.0.0.1:${appPort}${path}`, { authorization: `token ${row.secret}` })));
      proxied.push(take(await get(agent, `${base}${path}`, { cookie })));
    }
    // The secret mask alone, in this process, over the same bytes in the proxy's chunk size.
    const mask = new SecretMask(row.secret);
    let masked = 0;
    mask.on('data', (chunk: Buffer) => (masked += chunk.length));
    const t0 = performance.now();
    for (let at = 0; at < BIG_BYTES; at += 65536) mask.write(BIG_BODY.subarray(at, at + 65536));
    await new Promise<void>((done) => mask.end(done));
    const maskMs = performance.now() - t0;
    if (masked !== BIG_BYTES) throw new Error(`the mask passed ${masked} bytes of ${BIG_BYTES}`);
    return { directMs: median(ascending(direct)), proxiedMs: median(ascending(proxied)), maskMiBs: BIG_BYTES / MiB / (maskMs / 1000) };
  } finally {
    agent.destroy();
  }
}

async function soak(o: Options, server: PortalServer, base: string, cookie: string, rows: SessionRow[], databaseUrl: string): Promise<Soak> {
  log(`c. ${IDLE_SECONDS} s idle, then ${rows.length} WebSockets for ${o.seconds} s…`);
  const stopIdle = sampleServer(server.pid);
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000 + 50));
  const idle = stopIdle();
  const sockets = await Promise.all(rows.map((row) => connect(`${base.replace('http:', 'ws:')}/sessions/${row.jobId}/api/kernels/k1/channels`, { cookie, origin: base })));
  const result: Soak = { idle, busy: [], sent: 0, echoed: 0, roundTrips: [], errors: 0, seenWritten: 0 };
  const stopBusy = sampleServer(server.pid);
  const until = performance.now() + o.seconds * 1000;
  await Promise.all(
    sockets.map(async (socket, i) => {
      // Spread over the second: socket i sends at i/N of each second.
      await new Promise((r) => setTimeout(r, (1000 * i) / sockets.length));
      let k = 0;
      while (performance.now() < until) {
        const next = performance.now() + 1000;
        result.sent++;
        try {
          result.roundTrips.push(await roundTrip(socket, JSON.stringify({ session: i, n: ++k, code: 'print(1)' })));
          result.echoed++;
        } catch {
          result.errors++;
        }
        await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      }
    }),
  );
  result.busy = stopBusy();
  for (const socket of sockets) socket.close();
  // The proxy writes session_seen_at about a second after the traffic that made it due.
  await new Promise((r) => setTimeout(r, 2000));
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
  try {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from jobs where id in ${sql(rows.map((r) => r.jobId))} and session_seen_at is not null`;
    result.seenWritten = row?.n ?? 0;
  } finally {
    await sql.end({ timeout: 5 });
  }
  return result;
}

// ---- the section -------------------------------------------------------------------------------

const ms = (n: number) => `${num(n, n < 10 ? 2 : 1)} ms`;
const p = (values: number[], q: number) => quantile(ascending(values), q);

function section(o: Options, r: { h: Pairs; w: Pairs; d: { directMs: number; proxiedMs: number; maskMiBs: number }; s: Soak; pgVersion: string; load0: string; load1: string; server: PortalServer; sessions: number }): string {
  const date = new Date().toISOString().slice(0, 10);
  const busy = r.s.busy.filter((x) => Number.isFinite(x.cpu));
  const idleCpu = r.s.idle.filter((x) => Number.isFinite(x.cpu));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const rss = r.s.busy.map((x) => x.rss);
  const windows: string[] = [];
  for (let from = 0; from < o.seconds; from += 10) {
    const inWindow = busy.filter((x) => x.at > from && x.at <= from + 10);
    if (inWindow.length === 0) continue;
    windows.push(`| ${from}–${Math.min(o.seconds, from + 10)} s | ${num(mean(inWindow.map((x) => x.cpu)), 1)} % | ${num(Math.max(...inWindow.map((x) => x.cpu)), 1)} % | ${num(inWindow.at(-1)!.rss, 0)} MiB |`);
  }
  const mbps = (msTaken: number) => `${num(BIG_BYTES / MiB / (msTaken / 1000), 0)} MiB/s`;
  const lines = [
    SECTION,
    '',
    `Measured by \`npm run bench:sessions\` (\`bench/sessions.ts\`) on ${date}. Machine: ${machine()}; the server (\`scripts/server.mjs\`, as \`npm start\` runs it, on the production build: one Node process, the portal's own worker running) and ${r.pgVersion} (a fresh database, dropped after the run) on the same machine as the client, which also plays the sessions' app (a Node HTTP server answering ${num(Buffer.byteLength(SMALL_BODY))} bytes of JSON, and a WebSocket echo). Load average at the start / end of the run: ${r.load0} → ${r.load1}.`,
    '',
    `Each proxied request passes the whole wall: the session cookie decoded, the session row checked (\`loadCaller\`), the job read as the person's tenant (a transaction under row-level security), \`connection.json\` opened without following links and checked, then http-proxy-3 on a kept-alive connection with the secret added, the portal's cookies taken out and the answer's body masked. The direct figures are the same requests to the app itself (with the secret), alternating with the proxied ones on the same machine at the same time.`,
    '',
    '| what | direct p50 | direct p99 | through the proxy p50 | through the proxy p99 | added p50 | added p99 |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    `| (a) HTTP GET, one after another (${num(o.requests)}, after ${WARM_UP} to warm up) | ${ms(p(r.h.direct, 0.5))} | ${ms(p(r.h.direct, 0.99))} | ${ms(p(r.h.proxied, 0.5))} | ${ms(p(r.h.proxied, 0.99))} | ${ms(p(r.h.added, 0.5))} | ${ms(p(r.h.added, 0.99))} |`,
    `| (b) WebSocket message and its echo (${num(o.messages)}, after ${WARM_UP}) | ${ms(p(r.w.direct, 0.5))} | ${ms(p(r.w.direct, 0.99))} | ${ms(p(r.w.proxied, 0.5))} | ${ms(p(r.w.proxied, 0.99))} | ${ms(p(r.w.added, 0.5))} | ${ms(p(r.w.added, 0.99))} |`,
    `| (d) a ${BIG_BYTES / MiB} MiB download (median of 5, alternating) | ${ms(r.d.directMs)} (${mbps(r.d.directMs)}) | | ${ms(r.d.proxiedMs)} (${mbps(r.d.proxiedMs)}) | | | |`,
    '',
    `The secret mask alone passes ${num(r.d.maskMiBs, 0)} MiB/s in the client's process (the same bytes, 64 KiB chunks): a proxied download's time is the second hop through a busy server process, not the mask.`,
    '',
    `(c) ${r.sessions} sessions open at once: ${r.sessions} job rows, one WebSocket through the proxy to each, each sending a message a second (spread over the second) for ${o.seconds} s. The server process's CPU (% of one core, from /proc/PID/stat each second) and RSS:`,
    '',
    '| window | CPU mean | CPU highest second | RSS at its end |',
    '| --- | --- | --- | --- |',
    `| idle, sockets closed (${IDLE_SECONDS} s before) | ${num(mean(idleCpu.map((x) => x.cpu)), 1)} % | ${num(Math.max(...idleCpu.map((x) => x.cpu)), 1)} % | ${num(r.s.idle.at(-1)!.rss, 0)} MiB |`,
    ...windows,
    '',
    `RSS start / peak / end of the ${o.seconds} s: ${num(rss[0]!, 0)} / ${num(Math.max(...rss), 0)} / ${num(rss.at(-1)!, 0)} MiB; CPU over the ${o.seconds} s: ${num(mean(busy.map((x) => x.cpu)), 1)} % of one core (idle before: ${num(mean(idleCpu.map((x) => x.cpu)), 1)} %, the worker's rounds). Messages: ${num(r.s.sent)} sent, ${num(r.s.echoed)} echoed, ${num(r.s.errors)} failed; round trip meanwhile p50 ${ms(p(r.s.roundTrips, 0.5))}, p99 ${ms(p(r.s.roundTrips, 0.99))}. \`session_seen_at\` written for ${num(r.s.seenWritten)} of ${r.sessions} sessions (each at most once per 30 s of the cluster's time — on the simulated cluster at speed ${SIM_SPEED}, every ${num(SEEN_EVERY_S)} s — one UPDATE for all due). The worker also asks the simulated cluster about these ${r.sessions + 1} rows every second (it does not know them, so it leaves them running).`,
  ];
  if (r.server.logged.errors) lines.push('', `The server logged ${num(r.server.logged.errors)} error line(s); first: \`${r.server.logged.samples[0]?.replaceAll('`', "'")}\`.`);
  lines.push('', `Sizes of this run: \`--requests ${o.requests} --messages ${o.messages} --sessions ${o.sessions} --seconds ${o.seconds}\`. Regenerate with \`npm run bench:sessions\`.`, '');
  return lines.join('\n');
}

// ---- main --------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const o = options();
  const load0 = loadAverage();
  log(`bench/sessions — ${num(o.requests)} GETs, ${num(o.messages)} messages, ${o.sessions} sessions for ${o.seconds} s; ${machine()}; load average ${load0}`);
  ensureBuild(root, { rebuild: o.rebuild, reuse: o.reuseBuild, webpack: o.webpack }, log);
  let database: BenchDatabase | undefined;
  let server: PortalServer | undefined;
  let app: Awaited<ReturnType<typeof startApp>> | undefined;
  const work = mkdtempSync(join(tmpdir(), 'portal-bench-sessions-'));
  const removeWork = () => {
    if (o.keep) log(`kept ${work} (--keep)`);
    else rmSync(work, { recursive: true, force: true });
    return Promise.resolve();
  };
  const unregisterWork = atInterrupt(removeWork);
  let unregisterServer = () => {};
  try {
    const dataDir = join(work, 'data');
    const filesDir = join(work, 'files');
    mkdirSync(dataDir);
    mkdirSync(filesDir);
    app = await startApp();
    database = await createBenchDatabase(o.adminUrl, { keep: o.keep, log });
    log(`starting the server on port ${o.port}: database ${database.name}, files in ${filesDir}; the app on port ${app.port}`);
    server = await startServer(root, { port: o.port, databaseUrl: database.url, dataDir, env: { SIM_NODE_MTBF_HOURS: '0', SIM_SPEED: String(SIM_SPEED), PORTAL_FILES_DIR: filesDir } });
    unregisterServer = atInterrupt(server.stop);
    const session = new Session(server.base);
    await session.signIn(PI, DEMO_PASSWORD);
    const projects = await session.must<{ id: string; title: string }[]>('project.list', undefined, 'query');
    const project = projects.find((x) => x.title.startsWith(PROJECT_TITLE));
    if (!project) throw new Error(`no project "${PROJECT_TITLE}…" for ${PI}`);
    const rows = await insertSessions(database.url, filesDir, project.id, app.port, o.sessions + 1);
    const [one, ...many] = rows as [SessionRow, ...SessionRow[]];
    const cookie = session.cookieHeader();
    // The wall lets the PI through to the first session: a sanity check before measuring.
    const first = await get(new http.Agent(), `${server.base}/sessions/${one.jobId}/api/status`, { cookie });
    if (first.status !== 200) throw new Error(`the first session answered HTTP ${first.status} through the proxy`);
    log(`a. ${num(o.requests)} GETs…`);
    const h = await httpLatency(o, server.base, app.port, cookie, one);
    log(`   direct p50 ${ms(p(h.direct, 0.5))}, proxied p50 ${ms(p(h.proxied, 0.5))}`);
    log(`b. ${num(o.messages)} WebSocket messages…`);
    const w = await wsLatency(o, server.base, app.port, cookie, one);
    log(`   direct p50 ${ms(p(w.direct, 0.5))}, proxied p50 ${ms(p(w.proxied, 0.5))}`);
    log('d. 32 MiB downloads…');
    const d = await download(server.base, app.port, cookie, one);
    const s = await soak(o, server, server.base, cookie, many, database.url);
    const pgVersion = await describeServer(o.adminUrl);
    const text = section(o, { h, w, d, s, pgVersion, load0, load1: loadAverage(), server, sessions: many.length });
    log(`\n${text}`);
    if (o.write) log(`wrote ${writeSection(root, SECTION, text)}`);
  } catch (error) {
    if (server) log(`--- last lines of the server ---\n${server.tail()}`);
    throw error;
  } finally {
    await server?.stop().catch(() => undefined);
    unregisterServer();
    await app?.close().catch(() => undefined);
    await database?.drop().catch((error: unknown) => log(`could not drop ${database?.name}: ${String(error)}`));
    await removeWork();
    unregisterWork();
  }
}

main().catch((error: unknown) => {
  if (wasInterrupted()) return;
  if (error instanceof UsageError) console.error(`bench/sessions: ${error.message}`);
  else console.error(error);
  process.exitCode = 1;
});
