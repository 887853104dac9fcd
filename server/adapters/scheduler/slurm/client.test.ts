import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSlurmClient } from './client';
import { SlurmError } from './errors';
import { mintSlurmToken } from './jwt';

function fixtureText(name: string): string {
  return readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8');
}

interface Seen {
  method: string;
  url: URL;
  rawUrl: string;
  headers: Headers;
  body: unknown;
  signal: AbortSignal;
}

// A fake slurmrestd: answers each request with the next canned (status, body) and records what it saw.
function fakeSlurm(answers: { status?: number; body: string }[]) {
  const seen: Seen[] = [];
  const fetch = async (input: RequestInfo | URL): Promise<Response> => {
    const request = input as Request;
    const text = await request.text();
    seen.push({ method: request.method, url: new URL(request.url), rawUrl: request.url, headers: request.headers, body: text ? JSON.parse(text) : undefined, signal: request.signal });
    const answer = answers.shift();
    if (!answer) throw new Error('no more answers');
    return new Response(answer.body, { status: answer.status ?? 200, headers: { 'content-type': 'application/json' } });
  };
  let tokens = 0;
  const client = createSlurmClient({ baseUrl: 'http://slurm.test:6820/', user: 'portal', token: () => `tok-${++tokens}`, fetch });
  return { client, seen };
}

async function failure(promise: Promise<unknown>): Promise<SlurmError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SlurmError) return error;
    throw error;
  }
  throw new Error('expected a SlurmError');
}

describe('createSlurmClient', () => {
  it('sends the user and a fresh token on every call, with a timeout signal', async () => {
    const { client, seen } = fakeSlurm([{ body: fixtureText('01-ping.resp.json') }, { body: fixtureText('01-ping.resp.json') }]);
    expect(await client.ping()).toEqual([{ hostname: 'vm', ping: 'UP', mode: 'primary' }]);
    await client.ping();
    expect(seen.map((s) => s.url.pathname)).toEqual(['/slurm/v0.0.38/ping', '/slurm/v0.0.38/ping']);
    expect(seen.map((s) => s.headers.get('x-slurm-user-name'))).toEqual(['portal', 'portal']);
    expect(seen.map((s) => s.headers.get('x-slurm-user-token'))).toEqual(['tok-1', 'tok-2']);
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it('submits a job and returns its id', async () => {
    const { client, seen } = fakeSlurm([{ body: fixtureText('02-submit.resp.json') }]);
    const body = JSON.parse(fixtureText('02-submit.req.json')) as Parameters<typeof client.submitJob>[0];
    expect(await client.submitJob(body)).toEqual({ jobId: '3' });
    expect(seen[0]).toMatchObject({ method: 'POST', body });
    expect(seen[0]!.url.pathname).toBe('/slurm/v0.0.38/job/submit');
  });

  it('a held submit answers 2042 next to its job id: the job exists', async () => {
    const { client } = fakeSlurm([{ body: JSON.stringify({ errors: [{ error_code: 2042, error: 'Job is in held state, pending scheduler release' }], job_id: 9 }) }]);
    expect(await client.submitJob({ script: '#!/bin/bash\ntrue', job: { environment: { PATH: '/bin' }, hold: true } })).toEqual({ jobId: '9' });
  });

  it('postAssociations lets through only the entry it is told to accept', async () => {
    const missingUser = JSON.stringify({ errors: [{ description: "Missing required field 'user'", source: '_parser_run' }] });
    const { client } = fakeSlurm([{ body: missingUser }, { body: missingUser }]);
    const assoc = { cluster: 'ci', account: 'p', parent_account: 'root' };
    await client.postAssociations([assoc], { accept: (e) => e.source === '_parser_run' });
    expect(await failure(client.postAssociations([assoc]))).toMatchObject({ kind: 'transient', status: 200 });
  });

  it('a refused submit throws the classified error (2014 permanent)', async () => {
    const { client } = fakeSlurm([{ status: 500, body: fixtureText('08-submit-too-many-gpus.resp.json') }]);
    const error = await failure(client.submitJob({ script: '#!/bin/bash\ntrue', job: { environment: { PATH: '/bin' } } }));
    expect(error).toMatchObject({ kind: 'permanent', code: 2014, status: 500 });
    expect(error.message).toContain('submitJob');
  });

  it('lists and reads jobs from slurmctld', async () => {
    const { client, seen } = fakeSlurm([{ body: fixtureText('04-jobs-list.resp.json') }, { body: fixtureText('03-job-get.resp.json') }]);
    const jobs = await client.listJobs();
    expect(jobs.map((j) => [j.job_id, j.name, j.job_state])).toEqual([
      [1, 'wrap', 'COMPLETED'],
      [2, 'smoke-rest', 'CANCELLED'],
      [3, 'portal-run-42', 'RUNNING'],
    ]);
    const job = await client.getJob('3');
    expect(job).toMatchObject({ job_id: 3, tres_alloc_str: 'cpu=2,mem=1G,node=1,billing=2,gres/gpu=2', time_limit: 5 });
    expect(seen[1]!.url.pathname).toBe('/slurm/v0.0.38/job/3');
  });

  it('an unknown job is not-found (2017)', async () => {
    const { client } = fakeSlurm([{ status: 500, body: fixtureText('10-job-get-unknown.resp.json') }]);
    expect(await failure(client.getJob('999999'))).toMatchObject({ kind: 'not-found', code: 2017 });
  });

  it('refuses ids that are no Slurm job ids before asking', async () => {
    const { client, seen } = fakeSlurm([]);
    expect(await failure(client.getJob('../ping'))).toMatchObject({ kind: 'permanent' });
    expect(seen).toHaveLength(0);
  });

  it('cancels with an optional signal', async () => {
    const { client, seen } = fakeSlurm([{ body: fixtureText('06-job-delete.resp.json') }, { body: fixtureText('06-job-delete.resp.json') }]);
    await client.cancelJob('3');
    await client.cancelJob('3', { signal: 'USR1' });
    expect(seen.map((s) => [s.method, s.url.pathname, s.url.search])).toEqual([
      ['DELETE', '/slurm/v0.0.38/job/3', ''],
      ['DELETE', '/slurm/v0.0.38/job/3', '?signal=USR1'],
    ]);
  });

  it('looks names up in slurmdbd with the list URL-encoded, and asks nothing for no names', async () => {
    const { client, seen } = fakeSlurm([{ body: fixtureText('12-slurmdb-jobs.resp.json') }]);
    expect(await client.dbJobs({ names: [] })).toEqual([]);
    expect(seen).toHaveLength(0);
    const jobs = await client.dbJobs({ names: ['portal-run-42', 'wrap', 'wrap'] });
    expect(jobs.map((j) => j.name)).toContain('wrap');
    expect(seen[0]!.url.pathname).toBe('/slurmdb/v0.0.38/jobs');
    expect(seen[0]!.rawUrl).toContain('job_name=portal-run-42%2Cwrap');
    expect(seen[0]!.rawUrl).not.toMatch(/job_name=[^&]*,/);
    expect(seen[0]!.url.searchParams.get('start_time')).toBe('now-30days');
    // slurmdbd matches the period against the eligible time: a job with a begin ahead is found only with an end past it.
    expect(seen[0]!.url.searchParams.get('end_time')).toBe('now+45days');
  });

  it('a slurmdbd that is down answers 200 + 7000: unreachable, not an empty list', async () => {
    const { client } = fakeSlurm([{ status: 200, body: JSON.stringify({ errors: [{ error_number: 7000, error: 'Unable to connect to database' }], jobs: [] }) }]);
    expect(await failure(client.dbJobs({ names: ['x'] }))).toMatchObject({ kind: 'unreachable', code: 7000, status: 200 });
  });

  it('"nothing found" (9003) is an empty list', async () => {
    const { client } = fakeSlurm([{ status: 200, body: JSON.stringify({ errors: [{ error_number: 9003, error: 'Nothing found' }], jobs: [] }) }]);
    expect(await client.dbJobs({ names: ['x'] })).toEqual([]);
  });

  it('reads a slurmdbd record, nodes and diag', async () => {
    const { client } = fakeSlurm([
      { body: fixtureText('11-slurmdb-job.resp.json') },
      { body: fixtureText('05-nodes.resp.json') },
      { body: JSON.stringify({ errors: [], statistics: { dbd_agent_queue_size: 0 } }) },
    ]);
    const [record] = await client.dbJob('3');
    expect(record).toMatchObject({ job_id: 3, name: 'portal-run-42', state: { current: 'CANCELLED' } });
    const [node] = await client.nodes();
    expect(node).toMatchObject({ name: 'n1', gres: 'gpu:8', gres_used: 'gpu:2' });
    expect(await client.diag()).toEqual({ dbdAgentQueueSize: 0 });
  });

  it('an answer of the wrong shape is transient', async () => {
    const { client } = fakeSlurm([{ body: JSON.stringify({ errors: [], job_id: 'three' }) }]);
    expect(await failure(client.submitJob({ script: 'x', job: { environment: { PATH: '/bin' } } }))).toMatchObject({ kind: 'transient' });
  });

  it('a request that gets no answer is unreachable', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6820'), { code: 'ECONNREFUSED' });
    const client = createSlurmClient({
      baseUrl: 'http://slurm.test',
      user: 'portal',
      token: () => 'tok',
      fetch: () => Promise.reject(new TypeError('fetch failed', { cause: refused })),
    });
    const error = await failure(client.listJobs());
    expect(error).toMatchObject({ kind: 'unreachable', status: null });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('gives up after timeoutMs', async () => {
    const hanging = (input: RequestInfo | URL) =>
      new Promise<Response>((_resolve, reject) => {
        const signal = (input as Request).signal;
        signal.addEventListener('abort', () => reject(signal.reason as Error));
      });
    const client = createSlurmClient({ baseUrl: 'http://slurm.test', user: 'portal', token: () => 'tok', timeoutMs: 30, fetch: hanging });
    const started = performance.now();
    const error = await failure(client.ping());
    expect(error).toMatchObject({ kind: 'unreachable' });
    expect(error.message).toContain('timed out');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('a token source that fails is auth, and nothing is sent', async () => {
    const { seen } = fakeSlurm([]);
    const client = createSlurmClient({
      baseUrl: 'http://slurm.test',
      user: 'portal',
      token: () => Promise.reject(new Error('ENOENT: jwt.key')),
      fetch: () => Promise.reject(new Error('must not be called')),
    });
    const error = await failure(client.ping());
    expect(error).toMatchObject({ kind: 'auth' });
    expect(error.message).toContain('ENOENT');
    expect(seen).toHaveLength(0);
  });

  it('a generic -1 sent with an expired token is auth (recorded: GET /jobs with an expired token)', async () => {
    const expiredJobs = JSON.stringify({ errors: [{ description: 'Failed while looking for jobs', error_number: -1, error: 'Unspecified error', source: 'slurm_load_jobs' }], jobs: [] });
    const token = mintSlurmToken(Buffer.from('k'.repeat(32)), 'portal', 60, 1_000);
    const answer = () => Promise.resolve(new Response(expiredJobs, { status: 500, headers: { 'content-type': 'application/json' } }));
    const at = (nowMs: number) => createSlurmClient({ baseUrl: 'http://slurm.test', user: 'portal', token: () => token, fetch: answer, now: () => nowMs });
    expect(await failure(at(2_000_000).listJobs())).toMatchObject({ kind: 'auth', code: -1, status: 500 });
    // The same answer with a token still valid: slurmctld trouble, not the token.
    expect(await failure(at(1_030_000).listJobs())).toMatchObject({ kind: 'transient', code: -1 });
  });

  it('"nothing found" with a 500 (GET /associations of a fresh account) is an empty list', async () => {
    const { client } = fakeSlurm([{ status: 500, body: JSON.stringify({ errors: [{ description: 'Nothing found', error_number: 9003, error: 'Nothing found with query', source: 'slurmdb_associations_get' }] }) }]);
    expect(await client.associations({ account: 'fresh' })).toEqual([]);
  });

  it('posts accounts and associations to slurmdbd', async () => {
    const ok = { body: JSON.stringify({ errors: [] }) };
    const { client, seen } = fakeSlurm([ok, ok]);
    await client.postAccounts([{ name: 'p1', description: 'project p1', organization: 'portal' }]);
    await client.postAssociations([{ account: 'p1', cluster: 'ci', user: 'portal', partition: 'gpu' }]);
    expect(seen.map((s) => [s.method, s.url.pathname, s.body])).toEqual([
      ['POST', '/slurmdb/v0.0.38/accounts', { accounts: [{ name: 'p1', description: 'project p1', organization: 'portal' }] }],
      ['POST', '/slurmdb/v0.0.38/associations', { associations: [{ account: 'p1', cluster: 'ci', user: 'portal', partition: 'gpu' }] }],
    ]);
  });
});
