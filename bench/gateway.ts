/**
 * The OpenAI-compatible gateway's cost (issue #29): streamed chat completions through the portal's
 * gateway against the same calls straight to the model server, at 1 and at 64 concurrent streams, in one
 * run. Writes the section "## Inference gateway" of BENCHMARKS.md.
 *
 * The production build (`scripts/server.mjs`, as `npm start` runs it) on a fresh database of the local
 * Postgres (demo mode, the demo centre seeded) and the simulated cluster; as the demo company's owner
 * (owner@company.example) an inference service is submitted, whose job runs the portal's model server
 * (bin/portal-model-server.mjs, paced at 10 ms a token as the simulated cluster starts it) on this
 * machine. A token with the scope `inference` is made. Then, for each concurrency, the same number of
 * streamed chat completions (`max_tokens` N with `ignore_eos`, so each streams exactly N tokens), first
 * straight to the model server (its host, port and secret from the job's connection file), then through
 * `/api/v1/openai/v1` — alternating rounds, so the machine's load falls on both alike. Per call: time to
 * first token (request sent → first content chunk) and the whole call; per round: tokens per second over
 * the round's wall time. Each placement runs the whole set: `split` pins the model server and the client
 * to one half of the cores and the portal and PostgreSQL to the other (a centre's deployment: the gateway
 * on hosts of its own), `shared` lets every process run anywhere (the machine as it is).
 *
 *   npm run bench:gateway -- [--calls 256] [--tokens 64] [--placement split|shared|both] [--modes one,together,spread] [--port 3213]
 *                            [--rebuild | --no-build] [--webpack]
 *                            [--database-url URL] [--keep] [--no-write]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectGroupName } from '~/server/core/scheduler/identity';
import { intFlag, serverBenchFlags, UsageError, type ServerBenchFlags } from './args';
import { atInterrupt, createBenchDatabase, describeServer, wasInterrupted, type BenchDatabase } from './database';
import { Session } from './http-client';
import { ensureBuild, startServer, type PortalServer } from './http-server';
import { loadAverage, machine, mark, writeSection } from './markdown';
import { cpuSecondsOf, pidsNamed, treeOf } from './proc-cpu';
import { ascending, median, num, quantile } from './stats';

const SECTION = '## Inference gateway';
const OWNER = 'owner@company.example';
const DEMO_PASSWORD = 'demo-password';
const MODEL = 'bench/support-7b';
/** The model server's time a token (bin/portal-model-server.mjs as the simulated cluster starts it). */
const TOKEN_MS = 10;
/**
 * How the calls come: one after another; 64 at once, all starting together (each wave of 64 arrives in
 * the same instant, as calls that take equally long stay in step); and 64 at once spread over one call's
 * length (stream k starts k × call length ÷ 64 later: 64 open streams as a steady load keeps them).
 */
const MODES = [
  { name: 'one', label: '1', figure: '1 stream', concurrency: 1, spread: false },
  { name: 'together', label: '64, starting together', figure: '64 streams starting together', concurrency: 64, spread: false },
  { name: 'spread', label: '64, spread', figure: '64 streams spread', concurrency: 64, spread: true },
] as const;
type Mode = (typeof MODES)[number];
const TARGET = { addedTtftP50Ms: 5, throughputRatio: 0.9 } as const;
/**
 * Where the processes run. `shared`: every process on every core, the machine as it is — the gateway's
 * CPU then comes out of the model server's and the client's, which on a two-core machine measures the
 * machine. `split`: the model server and the client on the first half of the cores, the portal (web and
 * worker) and PostgreSQL on the other half — as a centre deploys it, the gateway on hosts of its own,
 * apart from the GPU nodes that serve the models and from the clients. Both paths of a placement have
 * the same cores for the model server and the client; the gateway path adds the hop.
 */
const PLACEMENTS = ['split', 'shared'] as const;
type Placement = (typeof PLACEMENTS)[number];

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const log = (line: string) => process.stdout.write(`${line}\n`);

interface Options extends ServerBenchFlags {
  calls: number;
  tokens: number;
  placements: Placement[];
  modes: Mode[];
}

function placementsFlag(): Placement[] {
  const i = process.argv.indexOf('--placement');
  const value = i >= 0 ? process.argv[i + 1] : 'both';
  if (value === 'both') return [...PLACEMENTS];
  if (value === 'split' || value === 'shared') return [value];
  throw new UsageError(`--placement must be split, shared or both, not ${String(value)}`);
}

/** --modes one,together,spread (default all): which of MODES to run, e.g. one alone under a profiler. */
function modesFlag(): Mode[] {
  const i = process.argv.indexOf('--modes');
  if (i < 0) return [...MODES];
  const names = (process.argv[i + 1] ?? '').split(',');
  const unknown = names.filter((n) => !MODES.some((m) => m.name === n));
  if (unknown.length || names.length === 0) throw new UsageError(`--modes takes one or more of ${MODES.map((m) => m.name).join(', ')}, comma-separated; not ${unknown.join(', ') || 'nothing'}`);
  return MODES.filter((m) => names.includes(m.name));
}

function options(): Options {
  return {
    ...serverBenchFlags(3213),
    calls: intFlag('--calls', 256),
    tokens: intFlag('--tokens', 64),
    placements: placementsFlag(),
    modes: modesFlag(),
  };
}

/** One streamed call: when its first token came and when it ended (ms after it was sent), and the tokens streamed. */
interface Call {
  ttftMs: number;
  totalMs: number;
  tokens: number;
}

/** stream sends one streamed chat completion and reads it to its end, counting content chunks. */
async function stream(url: string, key: string, o: Options, i: number): Promise<Call> {
  const t0 = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: `Benchmark call ${i}: tell me about GPU hours.` }], max_tokens: o.tokens, ignore_eos: true, stream: true }),
  });
  if (response.status !== 200 || !response.body) throw new Error(`${url}: HTTP ${response.status} ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let tokens = 0;
  let ttftMs = Number.NaN;
  let head = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    if (head.length < 400) head += buffer.slice(0, 400 - head.length);
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const content = (JSON.parse(event.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
      if (content) {
        tokens += 1;
        if (Number.isNaN(ttftMs)) ttftMs = performance.now() - t0;
      }
    }
  }
  if (tokens !== o.tokens) throw new Error(`${url}: a call streamed ${tokens} tokens, expected ${o.tokens}; it began: ${JSON.stringify(head)}`);
  return { ttftMs, totalMs: performance.now() - t0, tokens };
}

interface Round {
  calls: Call[];
  /** From the first call sent to the last one's end, less the spread's ramp (the time before the last stream began). */
  wallMs: number;
}

/** round runs `calls` calls with `concurrency` in flight at once; `spread`: stream k begins k × (call length ÷ concurrency) in. */
async function round(url: string, key: string, o: Options, concurrency: number, calls: number, spread = false): Promise<Round> {
  const done: Call[] = [];
  let next = 0;
  const gapMs = spread ? (o.tokens * TOKEN_MS) / concurrency : 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, k) => {
      if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, k * gapMs));
      while (next < calls) done.push(await stream(url, key, o, next++));
    }),
  );
  const wallMs = performance.now() - t0 - (concurrency - 1) * gapMs;
  for (const c of done) if (c.tokens !== o.tokens) throw new Error(`a call streamed ${c.tokens} tokens, expected ${o.tokens}`);
  return { calls: done, wallMs };
}

interface Result {
  placement: Placement;
  mode: Mode;
  direct: Round[];
  gateway: Round[];
  /** CPU seconds the portal (web and worker) and PostgreSQL spent during the gateway's rounds, less what they spend idle. */
  gatewayCpu: { portal: number; postgres: number };
}

// ---- placement -----------------------------------------------------------------------------------

/** The model servers' processes (bin/portal-model-server.mjs, started by the simulated cluster) and what they started. */
function modelServerPids(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('portal-model-server')) out.push(...treeOf(Number(entry)));
    } catch {
      // ended meanwhile
    }
  }
  return [...new Set(out)];
}

/** pin sets the cores every thread of each process may run on (taskset); a process gone meanwhile is skipped. */
function pin(pids: readonly number[], cpus: string): void {
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', cpus, String(pid)], { stdio: 'ignore' });
    } catch {
      // ended meanwhile, or not ours to pin
    }
  }
}

const cpuRange = (from: number, to: number) => (from === to ? String(from) : `${from}-${to}`);

/** The processes of each party: the model server, the client (this process), the portal's tree without the model server, PostgreSQL. */
function parties(serverPid: number) {
  const models = modelServerPids();
  return { models, client: [process.pid], portal: treeOf(serverPid).filter((p) => !models.includes(p)), postgres: pidsNamed(['postgres']) };
}

/** place puts the processes where `placement` says (PostgreSQL's backends inherit the postmaster's cores). */
function place(placement: Placement, serverPid: number): string {
  const cores = availableParallelism();
  const p = parties(serverPid);
  const everywhere = cpuRange(0, cores - 1);
  if (placement === 'shared' || cores < 2) {
    pin([...p.models, ...p.client, ...p.portal, ...p.postgres], everywhere);
    return `every process on CPUs ${everywhere}`;
  }
  const half = Math.floor(cores / 2);
  pin([...p.models, ...p.client], cpuRange(0, half - 1));
  pin([...p.portal, ...p.postgres], cpuRange(half, cores - 1));
  return `model server and client on CPU ${cpuRange(0, half - 1)}, portal and PostgreSQL on CPU ${cpuRange(half, cores - 1)}`;
}

const tokensPerSecond = (rounds: Round[], o: Options) => rounds.reduce((s, r) => s + r.calls.length * o.tokens, 0) / (rounds.reduce((s, r) => s + r.wallMs, 0) / 1000);
const all = (rounds: Round[], pick: (c: Call) => number) => ascending(rounds.flatMap((r) => r.calls.map(pick)));

/** Which figures the targets are read on: the placement a centre runs, 1 stream and 64 streams as a steady load. */
const judged = (x: Result) => x.placement === 'split' && (x.mode.concurrency === 1 || x.mode.spread);

function section(o: Options, r: { results: Result[]; placed: Partial<Record<Placement, string>>; pgVersion: string; load0: string; load1: string; warmupMs: number }): string {
  const rows: string[] = [];
  const figures: string[] = [];
  const verdicts: boolean[] = [];
  for (const x of r.results) {
    const line = (path: string, rounds: Round[]) => {
      const ttft = all(rounds, (c) => c.ttftMs);
      const total = all(rounds, (c) => c.totalMs);
      return `| ${x.placement} | ${x.mode.label} | ${path} | ${num(rounds.reduce((s, q) => s + q.calls.length, 0))} | ${num(median(ttft), 1)} ms | ${num(quantile(ttft, 0.99), 1)} ms | ${num(median(total), 1)} ms | ${num(quantile(total, 0.99), 1)} ms | ${num(tokensPerSecond(rounds, o), 0)} |`;
    };
    rows.push(line('straight to the model server', x.direct), line('through the gateway', x.gateway));
    const added = median(all(x.gateway, (c) => c.ttftMs)) - median(all(x.direct, (c) => c.ttftMs));
    const added99 = quantile(all(x.gateway, (c) => c.ttftMs), 0.99) - quantile(all(x.direct, (c) => c.ttftMs), 0.99);
    const addedTotal = median(all(x.gateway, (c) => c.totalMs)) - median(all(x.direct, (c) => c.totalMs));
    const ratio = tokensPerSecond(x.gateway, o) / tokensPerSecond(x.direct, o);
    const calls = x.gateway.reduce((s, q) => s + q.calls.length, 0);
    const target = judged(x);
    if (target) verdicts.push(added <= TARGET.addedTtftP50Ms, ratio >= TARGET.throughputRatio);
    const of = `${x.mode.figure}, ${x.placement}`;
    figures.push(
      `| added time to first token, p50, ${of} | ${target ? `≤ ${TARGET.addedTtftP50Ms} ms` : `(≤ ${TARGET.addedTtftP50Ms} ms)`} | ${num(added, 1)} ms | ${mark(added <= TARGET.addedTtftP50Ms)} |`,
      `| added time to first token, p99, ${of} | — | ${num(added99, 1)} ms | |`,
      `| added time per call, p50, ${of} | — | ${num(addedTotal, 1)} ms | |`,
      `| tokens/s through the gateway ÷ straight, ${of} | ${target ? `≥ ${TARGET.throughputRatio}` : `(≥ ${TARGET.throughputRatio})`} | ${num(ratio, 3)} | ${mark(ratio >= TARGET.throughputRatio)} |`,
    );
    // At one stream a call's own CPU is too small beside the worker's background, which varies from second to second.
    if (x.mode.concurrency > 1) figures.push(`| the gateway's CPU a call (portal + PostgreSQL, less their idle rate), ${of} | — | ${num((x.gatewayCpu.portal * 1000) / calls, 2)} + ${num((x.gatewayCpu.postgres * 1000) / calls, 2)} ms | |`);
  }
  const placements = Object.entries(r.placed).map(([p, where]) => `\`${p}\`: ${where}`);
  return [
    SECTION,
    '',
    `Measured by \`npm run bench:gateway\` (\`bench/gateway.ts\`) on ${new Date().toISOString().slice(0, 10)}. Machine: ${machine()}; the server (\`scripts/server.mjs\` on the production build, one Node process with the portal's worker), PostgreSQL ${r.pgVersion} (a fresh database, dropped after the run), the model server and the client on the same machine. Load average at the start / end: ${r.load0} → ${r.load1}.`,
    `The demo company's owner submits an inference service serving \`${MODEL}\`; the simulated cluster runs its job as the portal's model server (\`bin/portal-model-server.mjs\`, 10 ms a token). Each call is a streamed chat completion of exactly ${o.tokens} tokens (\`ignore_eos\`), read to its end by a plain \`fetch\` client; rounds straight to the model server (its address and secret from the job's connection file) and through \`/api/v1/openai/v1\` (a token with the scope \`inference\`) alternate, two rounds each: ${Math.min(o.calls, 32)} calls one after another; ${o.calls} calls a round at 64 streams at once, first all starting together (so each wave of 64 arrives in one instant: calls that take equally long stay in step), then spread (stream k starts k × ${o.tokens * TOKEN_MS} ms ÷ 64 after the first, as 64 open streams of a steady load come and go). Time to first token: request sent → first content chunk. Tokens/s: tokens streamed ÷ the round's wall time (spread: less the ${num(((64 - 1) * o.tokens * TOKEN_MS) / 64)} ms before its last stream began, the same for both paths). A warm-up round through the gateway first (${num(r.warmupMs)} ms, not counted).`,
    '',
    `Placements (CPU affinity, \`taskset\`), each run whole, one after the other: ${placements.join('; ')}. \`split\` is how a centre runs it: the gateway on hosts of its own, apart from the GPU nodes that serve the models and from its clients, so both paths give the model server and the client the same cores and the gateway path adds the hop (PostgreSQL, which a centre also runs apart, shares the gateway's core here). \`shared\` is the machine as it is: the gateway's CPU comes out of the model server's and the client's, on two cores.`,
    '',
    '| placement | streams at once | path | calls | time to first token, p50 | p99 | whole call, p50 | p99 | tokens/s |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    'What the gateway adds to each call: the token check (its row kept a second), its requests-a-minute count (one statement on the UNLOGGED `rate_limits`, sent as the request comes in, awaited before the forward: past the limit nothing reaches a model server), where the model is served (its services and connection files, kept a second and looked up again beside the calls), then at once the forward and the call\'s admission — its tokens-a-minute count and its reservation on the company\'s credit line, the calls of one allocation reserving together (one transaction a batch: the organisation\'s and the allocation\'s locks, the budgets, the calls\' rows and reserves) — no byte passing before the call is admitted; the stream passed as a Node stream from the model server\'s socket through the usage tap to the client\'s (no web stream, no promise per event); the settlement (the calls ending together, one transaction) before the client sees the end. The server runs with `DATABASE_POOL_MAX=40`.',
    '',
    'Where the time goes: at one stream the forward leaves about 3 ms after the request came in (token, count, route, body), the rest is the extra hop. In the `shared` placement the two cores are shared by the model server, the client, PostgreSQL and the gateway, and each of the 6,400 events a second at 64 streams costs the gateway a read and a write on a socket, as many system calls as the model server and the client together spend on it (in a CPU profile, `BENCH_CPU_PROFILE_DIR=<folder>`, socket writes are the largest share, then the statements of the calls\' admissions and settlements): what the gateway takes, the model server and the client lack. In the `split` placement at 64 streams spread the throughput holds, but the gateway\'s core runs nearly full (its CPU a call, in the last table, times about 90 calls a second, with PostgreSQL on the same core), so each statement of a call\'s admission waits its turn, and the first token waits for the admission: stamped per stage in an earlier run of this placement, the model server\'s headers came a median 3–7 ms after the request, the admission 6–14 ms after it (the forward and the admission go at once; no byte passes before the call is admitted and its worst case reserved). Starting together, the 64 calls of a wave are admitted one after another by one Node process (its CPU a call is in the last table), so the last one waits the sum: the time to first token then measures that burst, in either placement; the model server itself queues such a wave too (its own time to first token at 64 starting together against 1 stream).',
    '',
    'History (`shared`, the only placement before stop 45): before metering (stop 39) +6.4 ms at one stream, +106 ms and 0.80 at 64 starting together; with metering at stop 40, +11.6 ms, and +433 ms and 0.52; at 2bf1eb6 (web streams, the count on a logged table, the token read each call) +6.3 ms, +127 ms and 0.744 on a quiet hour; on a busier day 2bf1eb6, built side by side, measured +9.1 ms, +374 ms and 0.591, and with the Node stream alone +8.5 ms, +263 ms and 0.658; on 2026-12-06 (stop 42) +5.5 ms at one stream, +103.7 ms and 0.800 at 64 spread.',
    '',
    '| figure | target | measured | |',
    '| --- | --- | ---: | --- |',
    ...figures,
    '',
    `Targets (≤ ${TARGET.addedTtftP50Ms} ms added to the median time to first token, ≥ ${TARGET.throughputRatio} × the tokens a second) are read on the \`split\` placement at 1 stream and at 64 streams as a steady load: ${verdicts.length === 0 ? 'not measured in this run' : verdicts.every(Boolean) ? '**met**' : '**missed**'}. The figures in brackets are the same measures where no target applies: the machine shared, and a wave of 64 calls arriving in one instant.`,
    '',
    `Regenerate with \`npm run bench:gateway\` (\`--calls ${o.calls} --tokens ${o.tokens}\`; \`--placement split|shared|both\`, default both).`,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const o = options();
  if (o.calls < 64) throw new UsageError('--calls must be at least 64 (one round at 64 streams at once)');
  const load0 = loadAverage();
  log(`bench/gateway — ${o.calls} calls a round, ${o.tokens} tokens each; ${machine()}; load average ${load0}`);
  ensureBuild(root, { rebuild: o.rebuild, reuse: o.reuseBuild, webpack: o.webpack }, log);
  let database: BenchDatabase | undefined;
  let server: PortalServer | undefined;
  const work = mkdtempSync(join(tmpdir(), 'portal-bench-gateway-'));
  const unregisterWork = atInterrupt(() => Promise.resolve(o.keep ? undefined : rmSync(work, { recursive: true, force: true })));
  let unregisterServer = () => {};
  try {
    const dataDir = join(work, 'data');
    const filesDir = join(work, 'files');
    mkdirSync(dataDir);
    mkdirSync(filesDir);
    database = await createBenchDatabase(o.adminUrl, { keep: o.keep, log });
    server = await startServer(root, { port: o.port, databaseUrl: database.url, dataDir, env: { SIM_NODE_MTBF_HOURS: '0', PORTAL_FILES_DIR: filesDir, API_RATE_LIMIT_PER_MINUTE: '1000000', DATABASE_POOL_MAX: '40' } });
    unregisterServer = atInterrupt(server.stop);
    const session = new Session(server.base);
    await session.signIn(OWNER, DEMO_PASSWORD);
    const targets = await session.must<{ allocations: { id: string; projectId: string; available: number }[]; resourceClasses: { id: string; siteId: string }[] }>('job.targets', undefined, 'query');
    const allocation = [...targets.allocations].sort((a, b) => b.available - a.available)[0];
    const rc = targets.resourceClasses[0];
    if (!allocation || !rc) throw new Error(`${OWNER} has no allocation or resource class to run a service on`);
    const job = await session.must<{ id: string }>('job.submit', {
      allocationId: allocation.id,
      resourceClassId: rc.id,
      name: 'bench gateway',
      kind: 'inference',
      servedModel: MODEL,
      gpus: 1,
      nodes: 1,
      walltimeMinutes: 600,
      image: 'vllm/vllm-openai:v0.6.3',
      command: `vllm serve ${MODEL}`,
      env: {},
      idempotencyKey: crypto.randomUUID(),
    });
    const me = await session.must<{ organisations?: { id: string }[]; activeOrgId?: string }>('account.me', undefined, 'query');
    const orgs = await session.must<{ id: string }[]>('account.myOrganisations', undefined, 'query');
    const orgId = me.activeOrgId ?? orgs[0]?.id;
    if (!orgId) throw new Error(`${OWNER} belongs to no organisation`);
    const { token } = await session.must<{ token: string }>('account.createApiToken', { name: 'bench gateway', orgId, scopes: ['inference'], expiresInDays: 1, projectId: allocation.projectId });
    const file = join(filesDir, rc.siteId, projectGroupName(allocation.projectId), 'jobs', job.id, '.portal-session', 'connection.json');
    log(`service ${job.id}: waiting for its model server (${file})…`);
    let connection: { host: string; port: number; secret: string } | undefined;
    for (const deadline = Date.now() + 120_000; !connection; await new Promise((r) => setTimeout(r, 250))) {
      try {
        connection = JSON.parse(readFileSync(file, 'utf8')) as typeof connection;
      } catch {
        if (Date.now() > deadline) throw new Error(`the model server wrote no connection file within 120 s (${file})`);
      }
    }
    const direct = `http://127.0.0.1:${connection.port}/v1/chat/completions`;
    const gateway = `${server.base}/api/v1/openai/v1/chat/completions`;
    const w0 = performance.now();
    await round(gateway, token, o, 8, 64);
    const warmupMs = performance.now() - w0;
    const results: Result[] = [];
    const serverPid = server.pid;
    const unregisterPlacement = atInterrupt(() => Promise.resolve(void place('shared', serverPid)));
    const placed: Partial<Record<Placement, string>> = {};
    try {
      for (const placement of o.placements) {
        placed[placement] = place(placement, serverPid);
        log(`placement ${placement}: ${placed[placement]}`);
        // What the portal (its worker's ticks) and PostgreSQL spend with no call at all, taken off the CPU a call.
        const quiet = parties(serverPid);
        const idleFrom = { portal: cpuSecondsOf(quiet.portal), postgres: cpuSecondsOf(quiet.postgres), at: performance.now() };
        await new Promise((r) => setTimeout(r, 3000));
        const idleSeconds = (performance.now() - idleFrom.at) / 1000;
        const idle = { portal: (cpuSecondsOf(quiet.portal) - idleFrom.portal) / idleSeconds, postgres: (cpuSecondsOf(quiet.postgres) - idleFrom.postgres) / idleSeconds };
        for (const mode of o.modes) {
          const calls = mode.concurrency === 1 ? Math.min(o.calls, 32) : o.calls;
          const result: Result = { placement, mode, direct: [], gateway: [], gatewayCpu: { portal: 0, postgres: 0 } };
          for (let k = 0; k < 2; k++) {
            result.direct.push(await round(direct, connection.secret, o, mode.concurrency, calls, mode.spread));
            const who = parties(serverPid);
            const before = { portal: cpuSecondsOf(who.portal), postgres: cpuSecondsOf(who.postgres), at: performance.now() };
            result.gateway.push(await round(gateway, token, o, mode.concurrency, calls, mode.spread));
            const seconds = (performance.now() - before.at) / 1000;
            result.gatewayCpu.portal += Math.max(0, cpuSecondsOf(who.portal) - before.portal - idle.portal * seconds);
            result.gatewayCpu.postgres += Math.max(0, cpuSecondsOf(who.postgres) - before.postgres - idle.postgres * seconds);
            log(`  ${placement}, ${mode.label}, round ${k + 1}: straight ${num(tokensPerSecond(result.direct.slice(-1), o))} tok/s, gateway ${num(tokensPerSecond(result.gateway.slice(-1), o))} tok/s`);
          }
          results.push(result);
        }
      }
    } finally {
      place('shared', serverPid);
      unregisterPlacement();
    }
    const text = section(o, { results, placed, pgVersion: await describeServer(o.adminUrl), load0, load1: loadAverage(), warmupMs });
    log(`\n${text}`);
    if (o.write) log(`wrote ${writeSection(root, SECTION, text)}`);
  } catch (error) {
    if (server) log(`--- last lines of the server ---\n${server.tail()}`);
    throw error;
  } finally {
    await server?.stop().catch(() => undefined);
    unregisterServer();
    await database?.drop().catch((error: unknown) => log(`could not drop ${database?.name}: ${String(error)}`));
    if (!o.keep) rmSync(work, { recursive: true, force: true });
    unregisterWork();
  }
}

main().catch((error: unknown) => {
  if (wasInterrupted()) return;
  if (error instanceof UsageError) console.error(`bench/gateway: ${error.message}`);
  else console.error(error);
  process.exitCode = 1;
});
