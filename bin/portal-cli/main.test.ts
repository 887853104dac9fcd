// The whole CLI through main(), with a fake portal behind a fake fetch: what a person or a script
// sees on stdout and stderr, and the exit code, for each command and each kind of failure.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientFactory, main } from './main.mjs';

const JOB_ID = '3f2c0d9e-1111-4aaa-8bbb-000000000001';
const ALLOCATION_ID = '5a6b7c8d-2222-4ccc-8ddd-000000000002';

type Reply = { status?: number; json?: unknown; text?: string | Buffer; headers?: Record<string, string> } | Error;
type Call = { method: string; url: URL; headers: Record<string, string>; body: unknown };
type Route = (call: Call) => Reply;

/** fakePortal answers requests by "METHOD /path" (path without /api/v1); it records every call. */
function fakePortal(routes: Record<string, Route | Reply | Reply[]>) {
  const calls: Call[] = [];
  const fetch = (input: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Response> => {
    const url = new URL(input);
    const call = { method: init.method, url, headers: init.headers, body: init.body === undefined ? undefined : (JSON.parse(init.body) as unknown) };
    calls.push(call);
    const key = `${init.method} ${url.pathname.replace(/^\/api\/v1/, '')}`;
    const route = routes[key];
    if (route === undefined) return Promise.resolve(Response.json({ error: { code: 'NOT_FOUND', message: `no route ${key}` } }, { status: 404 }));
    const reply = typeof route === 'function' ? route(call) : Array.isArray(route) ? (route.length > 1 ? route.shift()! : route[0]!) : route;
    if (reply instanceof Error) return Promise.reject(reply);
    const headers = new Headers(reply.headers);
    if (reply.json !== undefined) return Promise.resolve(Response.json(reply.json, { status: reply.status ?? 200, headers }));
    const body = typeof reply.text === 'string' ? reply.text : reply.text === undefined ? '' : new Uint8Array(reply.text);
    return Promise.resolve(new Response(body, { status: reply.status ?? 200, headers }));
  };
  return { calls, fetch };
}

function fakeIo(portal: ReturnType<typeof fakePortal>, options: { env?: Record<string, string>; tty?: boolean; confirm?: boolean; files?: Record<string, string>; stdin?: string; interruptAtSleep?: number } = {}) {
  const out: (string | Buffer)[] = [];
  const err: string[] = [];
  let clock = Date.parse('2026-12-02T08:00:00Z');
  let uuids = 0;
  const sleeps: number[] = [];
  let interrupt: (() => void) | undefined;
  const io = {
    stdout: { write: (chunk: string | Buffer) => out.push(chunk) },
    stderr: { write: (chunk: string) => err.push(chunk) },
    stdinIsTTY: options.tty ?? false,
    env: { PORTAL_URL: 'http://portal.test', PORTAL_TOKEN: 'afp_test', ...options.env },
    homedir: '/nonexistent-home',
    now: () => new Date(clock),
    sleep: (ms: number) => {
      clock += ms;
      sleeps.push(ms);
      // Ctrl-C pressed during the n-th wait.
      if (sleeps.length === options.interruptAtSleep) interrupt?.();
      return Promise.resolve();
    },
    onInterrupt: (handler: () => void) => {
      interrupt = handler;
      return () => (interrupt = undefined);
    },
    // A new value each call, so a test sees whether a retry reused its key.
    randomUUID: () => `aaaaaaaa-0000-4000-8000-${String(++uuids).padStart(12, '0')}`,
    readFile: (file: string) => {
      const text = options.files?.[file];
      if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return text;
    },
    readStdin: () => Promise.resolve(options.stdin ?? ''),
    promptSecret: () => Promise.resolve(options.stdin ?? ''),
    confirm: () => Promise.resolve(options.confirm ?? false),
    client: clientFactory({ fetch: portal.fetch, sleep: async () => {} }),
  };
  return {
    io,
    sleeps,
    stdout: () => out.map(String).join(''),
    stdoutBytes: () => Buffer.concat(out.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))),
    stderr: () => err.join(''),
  };
}

const jobFile = `name: train
kind: training
allocationId: ${ALLOCATION_ID}
resourceClassId: h100
gpus: 4
walltimeMinutes: 60
image: pytorch:24.05
command: python train.py
`;

const estimate = {
  room: { unit: 'gpu_seconds', available: 360_000, monthCapLeftCents: null, gpusAtOnce: null },
  shortfalls: [],
  unit: 'gpu_seconds',
  reservation: 14_400,
  reservedGpuSeconds: 14_400,
  maxCostCents: 720,
  expectedCostCents: 576,
  centsPerGpuHour: 180,
  maxEnergyWh: 2800,
  expectedEnergyWh: 2240,
  assumedGpuUtilPercent: 80,
};

const jobRow = (n: number, state = 'COMPLETED') => ({
  id: `3f2c0d9e-1111-4aaa-8bbb-00000000000${n}`,
  name: `job ${n}`,
  kind: 'training',
  state,
  pendingReason: null,
  projectId: 'p',
  resourceClassId: 'h100',
  resourceClassName: 'H100 partition (Jena)',
  siteId: 'jena',
  gpus: 4,
  nodes: 1,
  submittedAt: '2026-12-01T10:00:00.000Z',
  startedAt: null,
  endedAt: null,
  gpuSeconds: 14_400,
  costCents: 720,
  energyWh: 2240,
});

describe('jobs submit', () => {
  it('shows the estimate, asks, submits once with an Idempotency-Key and prints the id', async () => {
    const portal = fakePortal({ 'POST /jobs/estimate': { json: estimate }, 'POST /jobs': { status: 201, json: { id: JOB_ID, state: 'PENDING' } } });
    const run = fakeIo(portal, { tty: true, confirm: true, files: { 'job.yaml': jobFile } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml'], run.io)).toBe(0);
    expect(run.stdout()).toBe(`${JOB_ID}\n`);
    expect(run.stderr()).toContain('Reservation:  4 GPU-h');
    expect(run.stderr()).toContain('Cost:         at most €7.20 at €1.80 per GPU-h');
    expect(run.stderr()).toContain('Energy:       at most 2.8 kWh');
    const [estimateCall, submitCall] = portal.calls;
    expect(estimateCall!.body).toEqual({ allocationId: ALLOCATION_ID, resourceClassId: 'h100', gpus: 4, nodes: 1, walltimeMinutes: 60 });
    expect(submitCall!.headers['idempotency-key']).toBe('aaaaaaaa-0000-4000-8000-000000000001');
    expect(submitCall!.headers.authorization).toBe('Bearer afp_test');
    expect(submitCall!.body).toMatchObject({ name: 'train', kind: 'training', gpus: 4, env: {} });
  });

  it('sends the same key again when the first answer was lost, so the retry finds the same job', async () => {
    const portal = fakePortal({ 'POST /jobs/estimate': { json: estimate }, 'POST /jobs': [new TypeError('fetch failed'), { json: { id: JOB_ID, state: 'PENDING' } }] });
    const run = fakeIo(portal, { files: { 'job.yaml': jobFile } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml', '--yes'], run.io)).toBe(0);
    const submits = portal.calls.filter((c) => c.url.pathname === '/api/v1/jobs');
    expect(submits).toHaveLength(2);
    expect(new Set(submits.map((c) => c.headers['idempotency-key'])).size).toBe(1);
  });

  it('refuses to submit without a terminal and without --yes, before asking the portal anything', async () => {
    const portal = fakePortal({});
    const run = fakeIo(portal, { tty: false, files: { 'job.yaml': jobFile } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml'], run.io)).toBe(2);
    expect(run.stderr()).toMatch(/stdin is not a terminal, so no one can confirm the submission: pass --yes/);
    expect(portal.calls).toHaveLength(0);
  });

  it('submits nothing when the person says no', async () => {
    const portal = fakePortal({ 'POST /jobs/estimate': { json: estimate } });
    const run = fakeIo(portal, { tty: true, confirm: false, files: { 'job.yaml': jobFile } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml'], run.io)).toBe(1);
    expect(run.stderr()).toContain('Not submitted.');
    expect(portal.calls.map((c) => c.url.pathname)).toEqual(['/api/v1/jobs/estimate']);
  });

  it('--json prints the created job and the estimate, nothing else', async () => {
    const portal = fakePortal({ 'POST /jobs/estimate': { json: estimate }, 'POST /jobs': { json: { id: JOB_ID, state: 'PENDING' } } });
    const run = fakeIo(portal, { files: { 'job.yaml': jobFile } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml', '--yes', '--json'], run.io)).toBe(0);
    expect(JSON.parse(run.stdout())).toEqual({ job: { id: JOB_ID, state: 'PENDING' }, estimate });
    expect(run.stderr()).toBe('');
  });

  it('a bad job file is a usage error naming the file', async () => {
    const run = fakeIo(fakePortal({}), { files: { 'job.yaml': 'name: x\n' } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml', '--yes'], run.io)).toBe(2);
    expect(run.stderr()).toMatch(/^error: job.yaml: missing fields: kind/);
    expect(await main(['jobs', 'submit', '--file', 'missing.yaml', '--yes'], run.io)).toBe(2);
    expect(run.stderr()).toContain('cannot read the job file missing.yaml: no such file');
  });
});

describe('errors and exit codes', () => {
  it.each([
    [401, 'UNAUTHORIZED', 3, /run `portal-cli login`/],
    [403, 'FORBIDDEN', 3, /scopes do not allow this/],
    [404, 'NOT_FOUND', 4, /error: Job not found/],
    [409, 'CONFLICT', 5, /error: Job not found/],
    [422, 'UNPROCESSABLE_CONTENT', 5, /error: Job not found/],
    [500, 'INTERNAL_SERVER_ERROR', 6, /error: Job not found/],
  ])('HTTP %i → exit %i', async (status, code, exit, message) => {
    const portal = fakePortal({ [`GET /jobs/${JOB_ID}`]: { status, json: { error: { code, message: 'Job not found', requestId: 'req-1' } } } });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'get', JOB_ID], run.io)).toBe(exit);
    expect(run.stderr()).toMatch(message);
    expect(run.stderr()).toContain('(request id req-1)');
  });

  it('a refusal names its fields: "error: message (field: …)", exit 5', async () => {
    const fields = { gpus: 'At most 8 GPUs per node', walltimeMinutes: 'Too long' };
    const portal = fakePortal({ 'POST /jobs/estimate': { status: 400, json: { error: { code: 'BAD_REQUEST', message: 'Check the highlighted fields', fields } } } });
    const run = fakeIo(portal, { files: { 'job.yaml': jobFile } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml', '--yes'], run.io)).toBe(5);
    expect(run.stderr()).toBe('error: Check the highlighted fields (gpus: At most 8 GPUs per node; walltimeMinutes: Too long)\n');
  });

  it('a field the message already names is not said twice', async () => {
    const portal = fakePortal({ 'GET /jobs': { status: 400, json: { error: { code: 'BAD_REQUEST', message: 'limit: Too big.', fields: { limit: 'Too big.', state: 'Unknown.' } } } } });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'list'], run.io)).toBe(5);
    expect(run.stderr()).toBe('error: limit: Too big. (state: Unknown.)\n');
  });

  it('--json reports the error as JSON on stderr with the same exit code', async () => {
    const portal = fakePortal({ 'POST /jobs/estimate': { status: 400, json: { error: { code: 'BAD_REQUEST', message: 'Check the fields', fields: { gpus: 'x' } } } } });
    const run = fakeIo(portal, { files: { 'job.yaml': jobFile } });
    expect(await main(['jobs', 'submit', '--file', 'job.yaml', '--yes', '--json'], run.io)).toBe(5);
    expect(JSON.parse(run.stderr())).toEqual({ error: { code: 'BAD_REQUEST', message: 'Check the fields', fields: { gpus: 'x' }, status: 400, exitCode: 5 } });
    expect(run.stdout()).toBe('');
  });

  it('429 is retried after Retry-After, then reported with the wait', async () => {
    const limited = { status: 429, headers: { 'retry-after': '2' }, json: { error: { code: 'TOO_MANY_REQUESTS', message: 'Too many requests' } } };
    const portal = fakePortal({ 'GET /allocations': limited });
    const run = fakeIo(portal);
    expect(await main(['allocations'], run.io)).toBe(5);
    expect(portal.calls).toHaveLength(3);
    expect(run.stderr()).toContain('try again in 2 s');
  });

  it('an unreachable portal names the URL, exit 6', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    const run = fakeIo(fakePortal({ 'GET /allocations': refused }));
    expect(await main(['allocations'], run.io)).toBe(6);
    expect(run.stderr()).toBe('error: cannot reach http://portal.test/api/v1/allocations: ECONNREFUSED\n');
  });

  it('an HTML page instead of the API says the address is likely wrong, exit 6', async () => {
    const run = fakeIo(fakePortal({ 'GET /allocations': { status: 404, text: '<html>', headers: { 'content-type': 'text/html' } } }));
    expect(await main(['allocations'], run.io)).toBe(6);
    expect(run.stderr()).toMatch(/http:\/\/portal.test\/api\/v1\/allocations answered HTTP 404 \(text\/html\), not the portal's API/);
  });

  it('without a token it says to log in, exit 3, and asks nothing of the network', async () => {
    const portal = fakePortal({});
    const run = fakeIo(portal, { env: { PORTAL_TOKEN: '' } });
    expect(await main(['jobs', 'list'], run.io)).toBe(3);
    expect(run.stderr()).toBe('error: not signed in: run `portal-cli login` (or set PORTAL_TOKEN)\n');
    expect(portal.calls).toHaveLength(0);
  });
});

describe('jobs list, get, cancel', () => {
  it('--all follows nextCursor to the last page', async () => {
    const portal = fakePortal({
      'GET /jobs': ({ url }) => (url.searchParams.get('cursor') === 'c2' ? { json: { items: [jobRow(3)], nextCursor: null } } : { json: { items: [jobRow(1), jobRow(2)], nextCursor: 'c2' } }),
    });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'list', '--all', '--limit', '2', '--state', 'completed', '--json'], run.io)).toBe(0);
    expect((JSON.parse(run.stdout()) as { items: { name: string }[] }).items.map((j) => j.name)).toEqual(['job 1', 'job 2', 'job 3']);
    expect(portal.calls.map((c) => c.url.search)).toEqual(['?limit=2&state=COMPLETED', '?limit=2&state=COMPLETED&cursor=c2']);
  });

  it('without --all shows one page as a table and says there is more', async () => {
    const portal = fakePortal({ 'GET /jobs': { json: { items: [jobRow(1, 'RUNNING')], nextCursor: 'c2' } } });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'list'], run.io)).toBe(0);
    const [header, row] = run.stdout().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+STATE\s+KIND\s+GPUS\s+CLASS\s+SUBMITTED \(UTC\)\s+USED\s+COST\s+ENERGY$/);
    expect(row).toBe('3f2c0d9e-1111-4aaa-8bbb-000000000001  job 1  RUNNING  training     4  H100 partition (Jena)  2026-12-01 10:00  4 GPU-h  €7.20  2.2 kWh');
    expect(run.stderr()).toContain('add --all');
    expect(portal.calls.map((c) => c.url.search)).toEqual(['']); // the API's own page size
  });

  it('get says which jobs a job starts after and who it runs as, and leaves both out when there is nothing to say', async () => {
    const parent = '3f2c0d9e-1111-4aaa-8bbb-0000000000aa';
    const job = { id: JOB_ID, name: 'evaluate', projectTitle: 'Sweeps', state: 'PENDING', pendingReason: 'Dependency', kind: 'batch', gpus: 1, nodes: 1, resourceClassId: 'h100', walltimeSeconds: 3600, image: 'img', submittedAt: '2026-12-01T10:00:00Z', startedAt: null, endedAt: null, events: [] };
    const withBoth = { ...job, dependency: { type: 'afterok', jobIds: [parent] }, dependencyJobs: [{ id: parent, name: 'train', state: 'RUNNING' }], runAsUser: 'anna_muller', runAsGroup: 'p0123456789abcdef' };
    const run = fakeIo(fakePortal({ [`GET /jobs/${JOB_ID}`]: { json: withBoth } }));
    expect(await main(['jobs', 'get', JOB_ID], run.io)).toBe(0);
    expect(run.stdout()).toMatch(new RegExp(`Starts after: +train \\(${parent}, RUNNING\\), once they completed\n`));
    expect(run.stdout()).toMatch(/Runs as: +anna_muller \(group p0123456789abcdef\)\n/);
    const plain = fakeIo(fakePortal({ [`GET /jobs/${JOB_ID}`]: { json: { ...job, dependency: null, runAsUser: null } } }));
    expect(await main(['jobs', 'get', JOB_ID], plain.io)).toBe(0);
    expect(plain.stdout()).not.toMatch(/Starts after|Runs as/);
  });

  it('cancel says what happened', async () => {
    const portal = fakePortal({ [`POST /jobs/${JOB_ID}/cancel`]: { json: { id: JOB_ID, state: 'CANCELLED' } } });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'cancel', JOB_ID], run.io)).toBe(0);
    expect(run.stdout()).toBe(`Job ${JOB_ID} is cancelled.\n`);
  });
});

describe('jobs watch', () => {
  const at = (s: number) => new Date(Date.parse('2026-12-02T08:00:00Z') + s * 1000).toISOString();
  const event = (id: number, state: string, s: number) => ({ id, jobId: JOB_ID, at: at(s), state, message: null, data: null });
  const job = (state: string, events: unknown[], extra = {}) => ({ json: { ...jobRow(1, state), id: JOB_ID, exitCode: null, events, ...extra } });

  it('prints each state change once with the portal’s times and exits 0 for COMPLETED', async () => {
    const portal = fakePortal({
      [`GET /jobs/${JOB_ID}`]: [
        job('PENDING', [event(1, 'SUBMITTING', 0), event(2, 'PENDING', 1)], { pendingReason: 'Resources' }),
        job('PENDING', [event(1, 'SUBMITTING', 0), event(2, 'PENDING', 1)], { pendingReason: 'Resources' }),
        job('RUNNING', [event(1, 'SUBMITTING', 0), event(2, 'PENDING', 1), event(3, 'RUNNING', 5)]),
        job('COMPLETED', [event(1, 'SUBMITTING', 0), event(2, 'PENDING', 1), event(3, 'RUNNING', 5), event(4, 'COMPLETED', 9), event(5, 'COMPLETED', 10)], { exitCode: 0 }),
      ],
    });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'watch', JOB_ID, '--interval', '1'], run.io)).toBe(0);
    expect(run.stdout()).toBe(
      [
        '2026-12-02 08:00:00 UTC  SUBMITTING',
        '2026-12-02 08:00:01 UTC  PENDING  Resources',
        '2026-12-02 08:00:05 UTC  RUNNING',
        '2026-12-02 08:00:09 UTC  COMPLETED',
        'Job completed with exit code 0: 4 GPU-h, €7.20, 2.2 kWh.',
        '',
      ].join('\n'),
    );
    expect(portal.calls).toHaveLength(4);
  });

  it('exits 1 when the job ends otherwise, and --json prints one line per change', async () => {
    const portal = fakePortal({ [`GET /jobs/${JOB_ID}`]: job('FAILED', [event(1, 'RUNNING', 0), event(2, 'FAILED', 3)], { exitCode: 1 }) });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'watch', JOB_ID, '--json'], run.io)).toBe(1);
    expect(run.stdout().trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { at: at(0), state: 'RUNNING' },
      { at: at(3), state: 'FAILED' },
    ]);
  });

  it('says which signal ended a job, as the API names it', async () => {
    const exitStatus = { kind: 'signal', exitCode: 0, signal: 15, signalName: 'SIGTERM', slurm: '0:15' };
    const portal = fakePortal({ [`GET /jobs/${JOB_ID}`]: job('TIMEOUT', [event(1, 'RUNNING', 0), event(2, 'TIMEOUT', 3)], { exitCode: 0, exitSignal: 15, exitStatus, gpuSeconds: 3600 }) });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'watch', JOB_ID], run.io)).toBe(1);
    expect(run.stdout()).toContain('Job timeout by signal 15 (SIGTERM): 1 GPU-h');
  });

  it('keeps watching through a portal restart (5xx, connection refused)', async () => {
    const portal = fakePortal({
      [`GET /jobs/${JOB_ID}`]: [job('RUNNING', [event(1, 'RUNNING', 0)]), { status: 503, json: { error: { code: 'UNAVAILABLE', message: 'restarting' } } }, new TypeError('fetch failed'), job('COMPLETED', [event(1, 'RUNNING', 0), event(2, 'COMPLETED', 60)])],
    });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'watch', JOB_ID], run.io)).toBe(0);
    expect(run.stdout()).toContain('08:01:00 UTC  COMPLETED');
  });
});

describe('usage and allocations', () => {
  it('--csv writes the API’s bytes unchanged (byte-order mark, CRLF)', async () => {
    const csv = Buffer.from('\uFEFFjob_id,project,cost_cents\r\n1,Müller “AI”,720\r\n');
    const portal = fakePortal({ 'GET /usage.csv': { text: csv, headers: { 'content-type': 'text/csv; charset=utf-8' } } });
    const run = fakeIo(portal);
    expect(await main(['usage', '--month', '2026-11', '--csv'], run.io)).toBe(0);
    expect(run.stdoutBytes().equals(csv)).toBe(true);
    expect(portal.calls[0]!.url.search).toBe('?month=2026-11');
  });

  it('shows the totals with units and one row per group', async () => {
    const figures = { jobs: 3, gpuSeconds: 36_000, avgWaitSeconds: 60, costCents: 1800, energyWh: 5600, facilityEnergyWh: 6700, heatReusedWh: 0, co2eGrams: 2400 };
    const report = { period: { from: '2026-11-01', to: '2026-11-30' }, groupBy: 'project', totals: figures, groups: [{ ...figures, key: 'p', label: 'Protein structure prediction' }], series: [], projects: [] };
    const run = fakeIo(fakePortal({ 'GET /usage': { json: report } }));
    expect(await main(['usage', '--from', '2026-11-01', '--to', '2026-11-30'], run.io)).toBe(0);
    expect(run.stdout()).toContain('Usage 2026-11-01 to 2026-11-30');
    expect(run.stdout()).toContain('GPU time:           10 GPU-h');
    expect(run.stdout()).toContain('Cost:               €18.00');
    expect(run.stdout()).toMatch(/Protein structure prediction\s+3\s+10 GPU-h\s+€18.00\s+5.6 kWh/);
  });

  it('lists allocations with balances in their unit', async () => {
    const balance = { granted: 360_000, charged: 36_000, reserved: 14_400, expired: 0, overrun: 0, available: 309_600 };
    const allocation = { id: ALLOCATION_ID, projectId: 'p', projectTitle: 'Protein structure prediction', resourceClassId: 'h100', resourceClassName: 'H100', unit: 'gpu_seconds', periodStart: '2026-01-01', periodEnd: '2026-12-31', status: 'active', statusReason: null, maxGpusAtOnce: null, maxWalltimeSeconds: null, maxQueuedJobs: null, balance };
    const run = fakeIo(fakePortal({ 'GET /allocations': { json: { items: [allocation] } } }));
    expect(await main(['allocations'], run.io)).toBe(0);
    expect(run.stdout()).toMatch(new RegExp(`${ALLOCATION_ID}\\s+Protein structure prediction\\s+h100\\s+2026-01-01 – 2026-12-31\\s+active\\s+100 GPU-h\\s+10 GPU-h\\s+4 GPU-h\\s+86 GPU-h`));
  });
});

describe('login and logout', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-cli-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('checks the token, then stores it with the address in a file only its owner can read', async () => {
    const file = path.join(dir, 'sub', 'config.json');
    const portal = fakePortal({ 'GET /allocations': { json: { items: [] } } });
    const run = fakeIo(portal, { env: { PORTAL_CLI_CONFIG: file, PORTAL_URL: '', PORTAL_TOKEN: '' }, tty: true, stdin: ' afp_secret \n' });
    expect(await main(['login', '--url', 'http://portal.test/'], run.io)).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ url: 'http://portal.test', token: 'afp_secret' });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(portal.calls[0]!.headers.authorization).toBe('Bearer afp_secret');
    expect(run.stdout()).not.toContain('afp_secret');

    // The stored token is used by the next command; logout removes it.
    const next = fakeIo(portal, { env: { PORTAL_CLI_CONFIG: file, PORTAL_URL: '', PORTAL_TOKEN: '' } });
    expect(await main(['allocations', '--json'], next.io)).toBe(0);
    expect(portal.calls[1]!.url.href).toBe('http://portal.test/api/v1/allocations');
    expect(await main(['logout'], next.io)).toBe(0);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('does not store a token the portal refuses', async () => {
    const file = path.join(dir, 'config.json');
    const portal = fakePortal({ 'GET /allocations': { status: 401, json: { error: { code: 'UNAUTHORIZED', message: 'The token is not valid' } } } });
    const run = fakeIo(portal, { env: { PORTAL_CLI_CONFIG: file } });
    expect(await main(['login', '--token', 'afp_revoked'], run.io)).toBe(3);
    expect(fs.existsSync(file)).toBe(false);
    expect(run.stderr()).toContain('error: The token is not valid');
  });

  it('refuses what is not a personal API token without asking the portal', async () => {
    const portal = fakePortal({});
    const run = fakeIo(portal, { env: { PORTAL_CLI_CONFIG: path.join(dir, 'c.json') } });
    expect(await main(['login', '--token', 'ghp_123'], run.io)).toBe(2);
    expect(run.stderr()).toContain('they start with afp_');
    expect(portal.calls).toHaveLength(0);
  });

  it('the environment overrides the stored address and token', async () => {
    const file = path.join(dir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ url: 'http://stored.test', token: 'afp_stored' }), { mode: 0o600 });
    const portal = fakePortal({ 'GET /allocations': { json: { items: [] } } });
    const run = fakeIo(portal, { env: { PORTAL_CLI_CONFIG: file, PORTAL_URL: 'http://env.test', PORTAL_TOKEN: 'afp_env' } });
    expect(await main(['allocations'], run.io)).toBe(0);
    expect(portal.calls[0]!.url.origin).toBe('http://env.test');
    expect(portal.calls[0]!.headers.authorization).toBe('Bearer afp_env');
  });
});

describe('jobs logs', () => {
  const output = (text: string, start: number, end: number, size: number, extra: Record<string, unknown> = {}) => ({ json: { text, start, end, size, exists: true, done: false, ...extra } });
  const job = (state: string, extra: Record<string, unknown> = {}) => ({ json: { ...jobRow(1, state), id: JOB_ID, exitCode: null, events: [], ...extra } });

  it('prints the last 64 KB of stdout, whole lines, and exits 0', async () => {
    const portal = fakePortal({ [`GET /jobs/${JOB_ID}/output`]: output('epoch 9\nepoch 10\n', 120, 138, 138) });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'logs', JOB_ID], run.io)).toBe(0);
    expect(run.stdout()).toBe('epoch 9\nepoch 10\n');
    expect(portal.calls.map((c) => c.url.search)).toEqual(['?stream=stdout&limit=65536']);
    const stderr = fakeIo(fakePortal({ [`GET /jobs/${JOB_ID}/output`]: output('warn\n', 0, 5, 5) }));
    expect(await main(['jobs', 'logs', JOB_ID, '--stderr', '--task', '3'], stderr.io)).toBe(0);
  });

  it('--follow asks for what follows the last byte: every second while lines come, backing off to 5 s, at once while more waits; exits as the job ended', async () => {
    const portal = fakePortal({
      [`GET /jobs/${JOB_ID}/output`]: [
        output('a\n', 0, 2, 2),
        output('', 2, 2, 2),
        output('', 2, 2, 2),
        output('', 2, 2, 2),
        output('', 2, 2, 2),
        output('b\n', 2, 4, 10),
        output('c\nd', 4, 7, 10),
        output('e\n', 7, 10, 10, { done: true }),
      ],
      [`GET /jobs/${JOB_ID}`]: job('FAILED', { exitCode: 2 }),
    });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'logs', JOB_ID, '--follow'], run.io)).toBe(1);
    expect(run.stdout()).toBe('a\nb\nc\nde\n');
    expect(run.sleeps).toEqual([1000, 2000, 4000, 5000, 5000]);
    const reads = portal.calls.filter((c) => c.url.pathname.endsWith('/output'));
    expect(reads.map((c) => c.url.searchParams.get('from'))).toEqual([null, '2', '2', '2', '2', '2', '4', '7']);
    expect(run.stderr()).toBe('Job failed with exit code 2.\n');
  });

  it('--follow of a job not started yet waits for its output, through a portal restart, and exits 0 for COMPLETED', async () => {
    const none = { json: { text: '', start: 0, end: 0, size: 0, exists: false, done: false } };
    const portal = fakePortal({
      [`GET /jobs/${JOB_ID}/output`]: [none, { status: 503, json: { error: { code: 'UNAVAILABLE', message: 'restarting' } } }, none, output('hello\n', 0, 6, 6, { done: true })],
      [`GET /jobs/${JOB_ID}`]: [job('PENDING', { pendingReason: 'Resources' }), job('COMPLETED', { exitCode: 0 })],
    });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'logs', JOB_ID, '--follow'], run.io)).toBe(0);
    expect(run.stdout()).toBe('hello\n');
    expect(run.stderr()).toContain('No stdout yet: the job is PENDING (Resources). Waiting for it…\n');
    expect(run.stderr()).toContain('Job completed with exit code 0.\n');
  });

  it('an array job read without --task is told to name one (exit 2)', async () => {
    const portal = fakePortal({
      [`GET /jobs/${JOB_ID}/output`]: { json: { text: '', start: 0, end: 0, size: 0, exists: false, done: false } },
      [`GET /jobs/${JOB_ID}`]: job('RUNNING', { array: { text: '0-3', tasks: 4, counts: { RUNNING: 4 } } }),
    });
    const run = fakeIo(portal);
    expect(await main(['jobs', 'logs', JOB_ID], run.io)).toBe(2);
    expect(run.stderr()).toMatch(/is an array \(0-3\): each task writes its own stdout; pass --task N/);
  });

  it('Ctrl-C stops following between two reads (exit 130)', async () => {
    const portal = fakePortal({ [`GET /jobs/${JOB_ID}/output`]: [output('a\n', 0, 2, 2), output('', 2, 2, 2)] });
    const run = fakeIo(portal, { interruptAtSleep: 2 });
    expect(await main(['jobs', 'logs', JOB_ID, '--follow'], run.io)).toBe(130);
    expect(run.stdout()).toBe('a\n');
    expect(portal.calls).toHaveLength(2);
  });
});

describe('files', () => {
  const PROJECT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  const at = '2026-12-01T10:00:00.000Z';
  const sites = { json: [{ id: 'ch-lugano', name: 'Lugano, Switzerland' }, { id: 'de-jena', name: 'Jena, Germany' }] };
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-cli-files-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('ls follows every page, says which site it chose, and shows sizes and times', async () => {
    const portal = fakePortal({
      [`GET /projects/${PROJECT}/workspaces`]: sites,
      [`GET /projects/${PROJECT}/files`]: [
        { json: { entries: [{ name: 'checkpoints', type: 'folder', size: 0, modifiedAt: at }], nextCursor: 'c1', total: 2 } },
        { json: { entries: [{ name: 'train.jsonl', type: 'file', size: 1_234_567, modifiedAt: at }], nextCursor: null, total: 2 } },
      ],
    });
    const run = fakeIo(portal);
    expect(await main(['files', 'ls', PROJECT, './data/'], run.io)).toBe(0);
    expect(run.stdout()).toBe(['NAME          TYPE       SIZE  MODIFIED (UTC)', 'checkpoints/  folder           2026-12-01 10:00', 'train.jsonl   file    1.23 MB  2026-12-01 10:00', ''].join('\n'));
    expect(run.stderr()).toBe('Site ch-lugano (Lugano, Switzerland); the project also has a workspace at de-jena: choose with --site.\n');
    const pages = portal.calls.filter((c) => c.url.pathname.endsWith('/files'));
    expect(pages.map((c) => [c.url.searchParams.get('site'), c.url.searchParams.get('path'), c.url.searchParams.get('cursor')])).toEqual([
      ['ch-lugano', 'data', null],
      ['ch-lugano', 'data', 'c1'],
    ]);
  });

  it('rm refuses a folder without --recursive before deleting anything; DELETE takes the path as query parameters', async () => {
    const portal = fakePortal({
      [`GET /projects/${PROJECT}/files/stat`]: { json: { name: 'runs', type: 'folder', size: 0, modifiedAt: at } },
      [`DELETE /projects/${PROJECT}/files`]: { json: { bytes: 5_000_000 } },
    });
    const refused = fakeIo(portal);
    expect(await main(['files', 'rm', PROJECT, 'runs', '--site', 'de-jena'], refused.io)).toBe(2);
    expect(refused.stderr()).toContain('de-jena:runs is a folder: pass --recursive');
    expect(portal.calls.map((c) => c.method)).toEqual(['GET']);
    const run = fakeIo(portal);
    expect(await main(['files', 'rm', PROJECT, 'runs', '--site', 'de-jena', '-r'], run.io)).toBe(0);
    expect(run.stdout()).toBe('Deleted de-jena:runs (5.00 MB).\n');
    const deletion = portal.calls.at(-1)!;
    expect([deletion.method, deletion.url.search, deletion.body]).toEqual(['DELETE', '?site=de-jena&path=runs', undefined]);
  });

  it('mkdir and mv say what they did (the portal answers them with an empty JSON body)', async () => {
    const empty = { text: '', headers: { 'content-type': 'application/json' } };
    const portal = fakePortal({ [`POST /projects/${PROJECT}/files/folders`]: empty, [`POST /projects/${PROJECT}/files/move`]: empty });
    const run = fakeIo(portal);
    expect(await main(['files', 'mkdir', PROJECT, 'data', '--site', 'de-jena'], run.io)).toBe(0);
    expect(await main(['files', 'mv', PROJECT, 'data', 'inputs', '--site', 'de-jena'], run.io)).toBe(0);
    expect(run.stdout()).toBe('Made the folder de-jena:data.\nMoved de-jena:data to inputs.\n');
    expect(portal.calls.map((c) => c.body)).toEqual([
      { site: 'de-jena', path: 'data' },
      { site: 'de-jena', from: 'data', to: 'inputs' },
    ]);
  });

  it('get goes on from a .part with Range and If-Range, checks the range answered, and renames it when whole', async () => {
    const bytes = Buffer.from('0123456789abcdefghij');
    const local = path.join(dir, 'model.bin');
    const env = { PORTAL_CLI_CONFIG: path.join(dir, 'config', 'config.json') };
    const stat = { json: { name: 'model.bin', type: 'file', size: bytes.length, modifiedAt: at } };
    // The first run: the portal's answer breaks off after 8 bytes, three times over.
    const broken: Route = () => ({ status: 200, text: bytes.subarray(0, 8), headers: { etag: '"v1"', 'content-length': String(bytes.length) } });
    let portal = fakePortal({ [`GET /projects/${PROJECT}/files/stat`]: stat, [`GET /projects/${PROJECT}/files/content`]: broken });
    let run = fakeIo(portal, { env });
    expect(await main(['files', 'get', PROJECT, 'model.bin', local, '--site', 'de-jena'], run.io)).toBe(6);
    expect(fs.readFileSync(`${local}.part`).toString()).toBe('01234567');
    expect(run.stderr()).toContain('model.bin.part keeps the 8 B that arrived: run the same command again');
    expect(portal.calls.filter((c) => c.url.pathname.endsWith('/content')).map((c) => c.headers.range)).toEqual([undefined, 'bytes=8-', 'bytes=8-', 'bytes=8-', 'bytes=8-']);

    // The next run asks for the rest of the same version.
    const rest: Route = (call) => {
      expect([call.headers.range, call.headers['if-range']]).toEqual(['bytes=8-', '"v1"']);
      return { status: 206, text: bytes.subarray(8), headers: { etag: '"v1"', 'content-range': `bytes 8-19/${bytes.length}` } };
    };
    portal = fakePortal({ [`GET /projects/${PROJECT}/files/stat`]: stat, [`GET /projects/${PROJECT}/files/content`]: rest });
    run = fakeIo(portal, { env });
    expect(await main(['files', 'get', PROJECT, 'model.bin', local, '--site', 'de-jena'], run.io)).toBe(0);
    expect(fs.readFileSync(local)).toEqual(bytes);
    expect(fs.existsSync(`${local}.part`)).toBe(false);
    expect(run.stderr()).toContain('Resuming model.bin at 8 B of 20 B.');
    expect(run.stderr()).toContain(`Downloaded de-jena:model.bin to ${local} (20 B; 8 B of it from an earlier run).`);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'config', 'downloads.json'), 'utf8'))).toEqual({});
  });

  it('get - writes the bytes to stdout; a folder comes as a tar', async () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    const portal = fakePortal({
      [`GET /projects/${PROJECT}/files/stat`]: [{ json: { name: 'x.bin', type: 'file', size: 4, modifiedAt: at } }, { json: { name: 'out', type: 'folder', size: 0, modifiedAt: at } }],
      [`GET /projects/${PROJECT}/files/content`]: [
        { text: bytes, headers: { etag: '"e"', 'content-length': '4' } },
        { text: Buffer.from('tar bytes'), headers: { 'content-type': 'application/x-tar' } },
      ],
    });
    const run = fakeIo(portal, { env: { PORTAL_CLI_CONFIG: path.join(dir, 'config.json') } });
    expect(await main(['files', 'get', PROJECT, 'x.bin', '-', '--site', 'de-jena'], run.io)).toBe(0);
    expect(run.stdoutBytes()).toEqual(bytes);
    const tar = path.join(dir, 'out.tar');
    expect(await main(['files', 'get', PROJECT, 'out', `${dir}/`, '--site', 'de-jena'], run.io)).toBe(0);
    expect(fs.readFileSync(tar, 'utf8')).toBe('tar bytes');
    expect(run.stderr()).toContain(`Saved de-jena:out as a tar in ${tar} (9 B).`);
  });
});

describe('sessions (issue #28)', () => {
  const SESSION = '7d1e2f3a-3333-4eee-8fff-000000000003';
  const session = (over: Record<string, unknown> = {}) => ({
    id: SESSION,
    name: 'jupyter-session',
    app: 'jupyter',
    appName: 'Jupyter Notebook',
    state: 'RUNNING',
    resourceClassId: 'h100',
    resourceClassName: 'H100 partition (Jena)',
    gpus: 1,
    submittedAt: '2026-12-02T07:55:00.000Z',
    startedAt: '2026-12-02T07:56:00.000Z',
    endedAt: null,
    walltimeSeconds: 7200,
    endsAt: '2026-12-02T09:56:00.000Z',
    idleTimeoutSeconds: 1800,
    cancelRequested: false,
    url: `/sessions/${SESSION}/`,
    ready: true,
    ...over,
  });

  it('list shows each session with the address to open it; url prints it; another id is not found (exit 4)', async () => {
    const portal = fakePortal({ 'GET /sessions': { json: [session()] } });
    const run = fakeIo(portal);
    expect(await main(['sessions', 'list'], run.io)).toBe(0);
    expect(run.stdout()).toMatch(new RegExp(`${SESSION}\\s+Jupyter Notebook\\s+RUNNING\\s+1\\s+h100\\s+2026-12-02 07:55\\s+http://portal.test/sessions/${SESSION}/`));
    const url = fakeIo(portal);
    expect(await main(['sessions', 'url', SESSION], url.io)).toBe(0);
    expect(url.stdout()).toBe(`http://portal.test/sessions/${SESSION}/\n`);
    expect(url.stderr()).toBe('');
    const missing = fakeIo(portal);
    expect(await main(['sessions', 'url', JOB_ID], missing.io)).toBe(4);
    expect(missing.stderr()).toContain(`No session of yours has the id ${JOB_ID}.`);
  });

  it('extend asks for the minutes, sends them and says the new limit; a refusal is the portal\'s message', async () => {
    const portal = fakePortal({
      [`POST /sessions/${SESSION}/extend`]: [{ json: { id: SESSION, walltimeSeconds: 10_800, reserved: 3600 } }, { status: 412, json: { error: { code: 'PRECONDITION_FAILED', message: 'At most 0 h more.' } } }],
    });
    const run = fakeIo(portal);
    expect(await main(['sessions', 'extend', SESSION, '--minutes', '60'], run.io)).toBe(0);
    expect(portal.calls[0]!.body).toEqual({ minutes: 60 });
    expect(run.stdout()).toBe(`Session ${SESSION} extended by 60 min: it may now run 3h in all.\n`);
    const refused = fakeIo(portal);
    expect(await main(['sessions', 'extend', SESSION, '--minutes', '60'], refused.io)).not.toBe(0);
    expect(refused.stderr()).toContain('At most 0 h more.');
    for (const bad of [[], ['--minutes', '0'], ['--minutes', '1.5'], ['--minutes', 'an hour']]) {
      const usage = fakeIo(portal);
      expect(await main(['sessions', 'extend', SESSION, ...bad], usage.io)).toBe(2);
      expect(usage.stderr()).toContain('--minutes 60');
    }
    expect(portal.calls).toHaveLength(2);
  });

  it('says when a session is still starting or has ended, and lists none helpfully', async () => {
    const starting = fakeIo(fakePortal({ 'GET /sessions': { json: [session({ ready: false })] } }));
    expect(await main(['sessions', 'url', SESSION], starting.io)).toBe(0);
    expect(starting.stderr()).toContain('still starting');
    const ended = fakeIo(fakePortal({ 'GET /sessions': { json: [session({ ready: false, state: 'COMPLETED' })] } }));
    expect(await main(['sessions', 'url', SESSION, '--json'], ended.io)).toBe(0);
    expect(JSON.parse(ended.stdout())).toEqual({ id: SESSION, state: 'COMPLETED', ready: false, url: `http://portal.test/sessions/${SESSION}/` });
    const none = fakeIo(fakePortal({ 'GET /sessions': { json: [] } }));
    expect(await main(['sessions', 'list'], none.io)).toBe(0);
    expect(none.stdout()).toContain('No sessions');
  });
});
