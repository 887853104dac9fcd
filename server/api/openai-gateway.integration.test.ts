// The OpenAI-compatible gateway (issue #29) with the official `openai` client, end to end on the
// simulated cluster: a company submits an inference service; the cluster starts its model server
// (bin/portal-model-server.mjs) as the job; the client, pointed at `/api/v1/openai/v1` with a token of
// scope `inference`, lists the model, gets chat completions non-streamed and streamed and embeddings;
// a token without the scope, another tenant's token and a model nobody serves are refused in OpenAI's
// shape; a replica whose server died is passed over for one that answers; the service's end stops its
// server.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import { ledgerEntries, modelCalls } from '~/db/schema';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '~/db/client';
import type { SimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { runningServices as runningModelServers } from '~/server/adapters/scheduler/simulated-services';
import { defaultServedModel } from '~/server/core/jobs/inference';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { jobDirOf, workspaceOf } from '~/server/services/files/workspace';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { metrics } from '~/server/observability/metrics';
import { openGateway, type GatewayRig } from '~/server/testing/gateway';
import { serveFetch } from '~/server/testing/serve-fetch';
import { createRestHandler } from '~/server/api/rest';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets } from '~/server/testing/harness';
import { startModelService } from '~/server/testing/model-services';
import { isHealthy, probeReplicas } from '~/server/services/inference/health';

type Tenant = Awaited<ReturnType<typeof createTenant>>;

const TODAY = '2026-12-01';

describe.each(dbTargets())('the OpenAI-compatible gateway on %s', (target) => {
  let rig: GatewayRig;
  let db: Db;
  let scheduler: SimulatedScheduler;
  let baseURL: string;
  let tokens: GatewayRig['tokens'];
  let company: Tenant;
  let other: Tenant;
  let allocationId: string;
  let projectId: string;
  let otherProjectId: string;
  let now = new Date(`${TODAY}T09:00:00Z`);
  const clock = () => now;

  beforeAll(async () => {
    rig = await openGateway(target, { clock, name: 'gateway' });
    ({ db, scheduler, tokens, baseURL } = rig);
    const admin = await createStaff(db, 'admin');
    company = await createTenant(db, { name: `Gateway GmbH ${randomUUID().slice(0, 6)}` });
    other = await createTenant(db, { name: `Other AG ${randomUUID().slice(0, 6)}` });
    ({ allocationId, projectId } = await activeAllocation(db, company, admin, { gpuHours: 500, today: TODAY }));
    ({ projectId: otherProjectId } = await activeAllocation(db, other, admin, { gpuHours: 10, today: TODAY }));
  });
  afterAll(async () => {
    await rig?.close();
  });

  /** counted sums a gateway metric's samples whose labels include `labels`. */
  async function counted(name: string, labels: Record<string, string>): Promise<number> {
    const family = name.replace(/_(count|sum|bucket)$/, '');
    const json = await metrics().registry.getSingleMetric(family)!.get();
    return json.values.filter((v) => (v as { metricName?: string }).metricName === undefined || (v as { metricName?: string }).metricName === name).filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((sum, v) => sum + v.value, 0);
  }

  /** startService submits an inference service of the company and waits until its model server listens. */
  const startService = (model: string, name = 'support bot') =>
    startModelService({ db, scheduler, owner: company, on: { allocationId, projectId }, model, name, now: clock, tick: () => (now = new Date(now.getTime() + 1000)) });

  it('serves a company’s model to the official client: models, chat (whole and streamed), embeddings', { timeout: 60_000 }, async () => {
    const { jobId } = await startService('gateway-gmbh/support-7b');
    expect(runningModelServers()).toContain(jobId);
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId }), maxRetries: 0 });

    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['gateway-gmbh/support-7b']);
    expect((await client.models.retrieve('gateway-gmbh/support-7b')).id).toBe('gateway-gmbh/support-7b');

    const messages = [{ role: 'user' as const, content: 'Summarise the GPU budget, please.' }];
    const whole = await client.chat.completions.create({ model: 'gateway-gmbh/support-7b', messages, max_tokens: 30, seed: 7 });
    expect(whole.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(whole.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(whole.usage!.total_tokens).toBe(whole.usage!.prompt_tokens + whole.usage!.completion_tokens);
    // A research project's own service is free per token (its GPU time is charged on its job): the call is
    // recorded with its tokens, energy and CO2e, and the ledger has nothing of it.
    const [recorded] = await db.select().from(modelCalls).where(and(eq(modelCalls.orgId, company.orgId), eq(modelCalls.requestId, whole._request_id ?? '')));
    expect(recorded).toMatchObject({ status: 'settled', unit: 'gpu_seconds', promptTokens: whole.usage!.prompt_tokens, completionTokens: whole.usage!.completion_tokens, costMicro: 0, chargedAmount: 0, reservedAmount: 0, siteId: 'de-jena', serviceJobId: jobId });
    expect(recorded!.energyUwh).toBeGreaterThan(0);
    expect(await db.select().from(ledgerEntries).where(isNotNull(ledgerEntries.modelCallId))).toEqual([]);

    const stream = await client.chat.completions.create({ model: 'gateway-gmbh/support-7b', messages, max_tokens: 30, seed: 7, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    // The same request streamed: the same answer, the same usage.
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(usage).toEqual(whole.usage);

    // Streamed without asking for usage: the client gets no usage chunk, the gateway still counts the tokens.
    const tokensBefore = await counted('portal_gateway_tokens_total', { model: 'gateway-gmbh/support-7b', direction: 'completion' });
    const plain = await client.chat.completions.create({ model: 'gateway-gmbh/support-7b', messages, max_tokens: 30, seed: 7, stream: true });
    let plainText = '';
    for await (const chunk of plain) {
      expect(chunk.choices.length).toBeGreaterThan(0);
      expect(chunk.usage ?? null).toBeNull();
      plainText += chunk.choices[0]?.delta.content ?? '';
    }
    expect(plainText).toBe(text);
    expect(await counted('portal_gateway_tokens_total', { model: 'gateway-gmbh/support-7b', direction: 'completion' })).toBe(tokensBefore + whole.usage!.completion_tokens);
    expect(await counted('portal_gateway_requests_total', { model: 'gateway-gmbh/support-7b', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(await counted('portal_gateway_time_to_first_token_seconds_count', { model: 'gateway-gmbh/support-7b' })).toBeGreaterThanOrEqual(3);

    // A client that leaves mid-stream: counted as aborted, with the tokens it was sent.
    const abortedBefore = await counted('portal_gateway_errors_total', { model: 'gateway-gmbh/support-7b', kind: 'aborted' });
    const abort = new AbortController();
    const long = await client.chat.completions.create({ model: 'gateway-gmbh/support-7b', messages, max_tokens: 400, ignore_eos: true, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming, { signal: abort.signal });
    let received = 0;
    // The client's iteration ends (quietly or with an abort error, as the SDK decides) once it aborted.
    await (async () => {
      for await (const chunk of long) {
        if (chunk.choices[0]?.delta.content) received += 1;
        if (received === 5) abort.abort();
      }
    })().catch(() => undefined);
    expect(received).toBeGreaterThanOrEqual(5);
    expect(received).toBeLessThan(400);
    await expect.poll(() => counted('portal_gateway_errors_total', { model: 'gateway-gmbh/support-7b', kind: 'aborted' })).toBe(abortedBefore + 1);
    // The model server heard of it too and stopped generating: its log's line for the call says aborted, with fewer tokens than asked.
    const serverLog = path.join(jobDirOf(workspaceOf(configuredSiteRoots(), 'de-jena', projectId), jobId), 'model-server.log');
    await expect.poll(async () => (await readFile(serverLog, 'utf8')).split('\n').some((l) => l.includes('"aborted":true'))).toBe(true);
    const cut = (await readFile(serverLog, 'utf8')).split('\n').find((l) => l.includes('"aborted":true'))!;
    expect((JSON.parse(cut) as { completion_tokens: number }).completion_tokens).toBeLessThan(400);

    const embedded = await client.embeddings.create({ model: 'gateway-gmbh/support-7b', input: ['GPU hours', 'invoice'] });
    expect(embedded.data).toHaveLength(2);
    expect(embedded.data[0]!.embedding.length).toBe(64);
    expect(embedded.usage.prompt_tokens).toBeGreaterThan(0);

    // The service's end stops its server: the model is gone from the list.
    await callerFor(db, { userId: company.userId, orgId: company.orgId, scheduler, now: clock }).job.cancel({ jobId });
    for (let i = 0; i < 5; i++) {
      now = new Date(now.getTime() + 1000);
      await reconcileOnce(db, scheduler, now);
    }
    expect(runningModelServers()).not.toContain(jobId);
    expect((await client.models.list()).data).toEqual([]);
    await expect(client.chat.completions.create({ model: 'gateway-gmbh/support-7b', messages })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('answers a stream read as a web Response (Next’s route) as it pipes one to the socket, unbuffered, and settles both', { timeout: 60_000 }, async () => {
    await startService('gateway-gmbh/web-reader', 'web reader');
    const headers = { authorization: `Bearer ${await tokens.mint(company, ['inference'], { projectId })}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ model: 'gateway-gmbh/web-reader', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 12, seed: 3, stream: true });
    const contentOf = (events: string) =>
      events
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => (JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '')
        .join('');
    const piped = await fetch(`${baseURL}/chat/completions`, { method: 'POST', headers, body });
    expect(piped.headers.get('cache-control')).toBe('no-cache, no-transform');
    const pipedText = await piped.text();
    const web = await rig.rest(new Request('http://portal.test/api/v1/openai/v1/chat/completions', { method: 'POST', headers, body }));
    expect(web.status).toBe(200);
    expect(web.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const webText = await web.text();
    for (const text of [pipedText, webText]) {
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(text).not.toContain('"usage":{'); // the usage chunk the client did not ask for is left out
    }
    expect(contentOf(webText)).toBe(contentOf(pipedText));
    expect(contentOf(webText).length).toBeGreaterThan(0);
    const calls = await db.select().from(modelCalls).where(and(eq(modelCalls.orgId, company.orgId), eq(modelCalls.model, 'gateway-gmbh/web-reader')));
    expect(calls.map((c) => [c.status, c.completionTokens])).toEqual([
      ['settled', 12],
      ['settled', 12],
    ]);
  });

  it('refuses a token without the scope, another tenant and an unknown model, in OpenAI’s shape', { timeout: 60_000 }, async () => {
    await startService('gateway-gmbh/private-model', 'private');
    const messages = [{ role: 'user' as const, content: 'Hello' }];
    const readOnly = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['read', 'jobs:write']), maxRetries: 0 });
    const refused = await readOnly.chat.completions.create({ model: 'gateway-gmbh/private-model', messages }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as InstanceType<typeof OpenAI.PermissionDeniedError>).message).toMatch(/inference/);

    const stranger = new OpenAI({ baseURL, apiKey: await tokens.mint(other, ['inference'], { projectId: otherProjectId }), maxRetries: 0 });
    expect((await stranger.models.list()).data).toEqual([]);
    const notTheirs = await stranger.chat.completions.create({ model: 'gateway-gmbh/private-model', messages }).catch((e: unknown) => e);
    expect(notTheirs).toBeInstanceOf(OpenAI.NotFoundError);
    expect((notTheirs as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');

    const mine = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId }), maxRetries: 0 });
    const unknown = await mine.chat.completions.create({ model: 'nobody/serves-this', messages }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    const noModel = await fetch(`${baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${await tokens.mint(company, ['inference'], { projectId })}`, 'content-type': 'application/json' }, body: '{"messages": []}' });
    expect(noModel.status).toBe(400);
    expect(await noModel.json()).toMatchObject({ error: { param: 'model', code: 'missing_required_parameter', type: 'invalid_request_error' } });
  });

  it('takes a model name only for a service, in its form; names one without after the job, as the migration named the old ones', async () => {
    const caller = callerFor(db, { userId: company.userId, orgId: company.orgId, scheduler, now: clock });
    const base = { allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 60, image: 'vllm/vllm-openai:v0.6.3', command: 'vllm serve x', env: {} };
    const training = await caller.job.submit({ ...base, name: 'train', kind: 'training', servedModel: 'acme/x', idempotencyKey: randomUUID() }).catch((e: unknown) => e);
    expect(String((training as { message?: string }).message)).toMatch(/Only an inference service serves a model/);
    const bad = await caller.job.submit({ ...base, name: 'svc', kind: 'inference', servedModel: 'has space', idempotencyKey: randomUUID() }).catch((e: unknown) => e);
    expect(JSON.stringify(bad)).toMatch(/servedModel/);
    const named = await caller.job.submit({ ...base, name: 'Support Bot (EU)', kind: 'inference', idempotencyKey: randomUUID() });
    expect((await caller.job.get({ jobId: named.id })).inference?.model).toBe('support-bot-eu');
    await caller.job.cancel({ jobId: named.id });
    // drizzle/0055's SQL names an older service as defaultServedModel does.
    for (const name of ['LLM endpoint', '  Support bot (v2)! ', 'qwen2.5_chat', '!!!', `${'a'.repeat(63)} tail`, '-._x_.-']) {
      const result: unknown = await db.execute(
        sql`select coalesce(nullif(regexp_replace(left(regexp_replace(lower(${name}::text), '[^a-z0-9._-]+', '-', 'g'), 64), '^[-._]+|[-._]+$', '', 'g'), ''), 'model') as model`,
      );
      // postgres.js answers the rows, PGlite an object holding them.
      const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { model: string }[];
      expect(rows[0]!.model, name).toBe(defaultServedModel(name));
    }
  });

  it('serves 32 streams of one person’s token at once, each whole, every token counted once', { timeout: 60_000 }, async () => {
    await startService('gateway-gmbh/busy', 'busy');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId }), maxRetries: 0 });
    // The process's metrics count every database target's run: compare with what they held before.
    const before = await counted('portal_gateway_tokens_total', { model: 'gateway-gmbh/busy', direction: 'completion' });
    const requestsBefore = await counted('portal_gateway_requests_total', { model: 'gateway-gmbh/busy', status: '200' });
    const texts = await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        let pieces = 0;
        for await (const chunk of await client.chat.completions.create({ model: 'gateway-gmbh/busy', messages: [{ role: 'user', content: `tab ${i}` }], max_tokens: 20, ignore_eos: true, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming)) {
          if (chunk.choices[0]?.delta.content) pieces += 1;
        }
        return pieces;
      }),
    );
    expect(texts).toEqual(Array.from({ length: 32 }, () => 20));
    await expect.poll(() => counted('portal_gateway_tokens_total', { model: 'gateway-gmbh/busy', direction: 'completion' })).toBe(before + 32 * 20);
    expect(await counted('portal_gateway_requests_total', { model: 'gateway-gmbh/busy', status: '200' })).toBe(requestsBefore + 32);
  });

  it('passes over a replica whose server died for one that answers', { timeout: 60_000 }, async () => {
    const first = await startService('gateway-gmbh/replicated', 'replica one');
    const second = await startService('gateway-gmbh/replicated', 'replica two');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId }), maxRetries: 0 });
    // The first replica's server dies without a word (its connection file stays behind).
    process.kill(first.pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < 4; i++) {
      const answer = await client.chat.completions.create({ model: 'gateway-gmbh/replicated', messages: [{ role: 'user', content: `call ${i}` }], max_tokens: 5 });
      expect(answer.choices[0]!.message.content!.length).toBeGreaterThan(0);
    }
    const logFile = path.join(jobDirOf(workspaceOf(configuredSiteRoots(), 'de-jena', projectId), second.jobId), 'model-server.log');
    // Every call reached the second replica: its log has a line per request (never the prompt), written as each ends.
    const calls = async () => (await readFile(logFile, 'utf8')).split('\n').filter((l) => l.includes('"path":"/v1/chat/completions"')).length;
    await expect.poll(calls).toBe(4);
    expect(await readFile(logFile, 'utf8')).not.toContain('call 0');
  });
  it('probes its replicas: a hung server is passed over at once, and used again when it answers', { timeout: 60_000 }, async () => {
    const first = await startService('gateway-gmbh/probed', 'probed one');
    const second = await startService('gateway-gmbh/probed', 'probed two');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId }), maxRetries: 0 });
    const call = (i: number) => client.chat.completions.create({ model: 'gateway-gmbh/probed', messages: [{ role: 'user', content: `probe ${i}` }], max_tokens: 3 });
    await call(0); // the route names both: they are under probing now
    // The first server hangs (stopped: its port still takes connections, nothing answers).
    process.kill(first.pid, 'SIGSTOP');
    try {
      await probeReplicas();
      expect(isHealthy(first.jobId)).toBe(false);
      expect(isHealthy(second.jobId)).toBe(true);
      const started = performance.now();
      for (let i = 1; i <= 4; i++) expect((await call(i)).choices).toHaveLength(1);
      // No call waited for the hung server (a forward's own time-out is 10 s).
      expect(performance.now() - started).toBeLessThan(8_000);
    } finally {
      process.kill(first.pid, 'SIGCONT');
    }
    await probeReplicas();
    expect(isHealthy(first.jobId)).toBe(true);
    const logOf = (jobId: string) => path.join(jobDirOf(workspaceOf(configuredSiteRoots(), 'de-jena', projectId), jobId), 'model-server.log');
    const calls = async (jobId: string) => (await readFile(logOf(jobId), 'utf8').catch(() => '')).split('\n').filter((l) => l.includes('"path":"/v1/chat/completions"')).length;
    // The hung server got none of the four; its health probes are not in its log.
    await expect.poll(() => calls(second.jobId)).toBeGreaterThanOrEqual(4);
    expect(await calls(first.jobId)).toBeLessThanOrEqual(1);
    expect(await readFile(logOf(first.jobId), 'utf8').catch(() => '')).not.toContain('/health');
  });
  it('counts every request against the token’s requests a minute: past it 429 in OpenAI’s shape, and nothing forwarded', { timeout: 60_000 }, async () => {
    const { jobId } = await startService('gateway-gmbh/counted', 'counted');
    const strict = await serveFetch(createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 3, scheduler, now: clock }));
    try {
      const client = new OpenAI({ baseURL: `${strict.origin}/api/v1/openai/v1`, apiKey: await tokens.mint(company, ['inference'], { projectId }), maxRetries: 0 });
      const listed = await client.models.list().withResponse();
      expect(listed.response.headers.get('x-ratelimit-remaining-requests')).toBe('2');
      const answered = await client.chat.completions.create({ model: 'gateway-gmbh/counted', messages: [{ role: 'user', content: 'one' }], max_tokens: 3 }).withResponse();
      expect([answered.response.headers.get('x-ratelimit-limit-requests'), answered.response.headers.get('x-ratelimit-remaining-requests')]).toEqual(['3', '1']);
      await client.chat.completions.create({ model: 'gateway-gmbh/counted', messages: [{ role: 'user', content: 'two' }], max_tokens: 3 });
      const refused = await client.chat.completions.create({ model: 'gateway-gmbh/counted', messages: [{ role: 'user', content: 'three' }], max_tokens: 3 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
      expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('rate_limit_exceeded');
      expect((refused as Error).message).toContain('3 requests a minute');
      expect((refused as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toMatch(/^\d+$/);
      // A refusal before any model is looked up counts too, and is refused the same way.
      expect((await client.models.list().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>).toMatchObject({ status: 429 });
      const logFile = path.join(jobDirOf(workspaceOf(configuredSiteRoots(), 'de-jena', projectId), jobId), 'model-server.log');
      const forwarded = async () => (await readFile(logFile, 'utf8')).split('\n').filter((l) => l.includes('"path":"/v1/chat/completions"'));
      await expect.poll(async () => (await forwarded()).length).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The refused call reached no model server (a cancelled forward would be logged as aborted).
      expect(await forwarded()).toHaveLength(2);
    } finally {
      await strict.close();
    }
  });
});
