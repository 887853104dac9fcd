// The centre's shared models through the gateway (issue #29), with the official `openai` client, on both databases:
// - an admin starts a replica of a catalogue model: an inference service of the centre's own tenant, its
//   GPU time charged to the centre's allocation when it stops;
// - every tenant lists and calls it and pays the catalogue's price of its kind: a company in cents on its
//   credit line, a research group in GPU-seconds at its class's tariff;
// - residency: a DE-only project is not served from Finland, the refusal names it;
// - a tenant's service may not take a shared model's name; tenants see where it runs, not its jobs.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '~/db/client';
import { allocations, jobs, modelCalls, organisations } from '~/db/schema';
import type { SimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { configuredCatalogue } from '~/server/catalogue';
import { callCostMicro, chargeWithCarry, microPrice } from '~/server/core/inference/metering';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { balanceOfRow, ledgerSums } from '~/server/services/ledger/ledger';
import { openGateway, type GatewayRig } from '~/server/testing/gateway';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets } from '~/server/testing/harness';
import { waitForModelServer } from '~/server/testing/model-services';

const TODAY = '2026-12-01';
const LLAMA = 'centre/llama-3.1-8b-instruct';
const MISTRAL = 'centre/mistral-small-24b-instruct';

type Tenant = Awaited<ReturnType<typeof createTenant>>;

describe.each(dbTargets())('the centre’s shared models on %s', (target) => {
  let rig: GatewayRig;
  let db: Db;
  let scheduler: SimulatedScheduler;
  let baseURL: string;
  let tokens: GatewayRig['tokens'];
  let admin: { userId: string };
  let reviewer: { userId: string };
  let now = new Date(`${TODAY}T09:00:00Z`);
  const clock = () => now;
  const tick = () => (now = new Date(now.getTime() + 1000));
  const staff = (who: { userId: string }) => callerFor(db, { userId: who.userId, scheduler, now: clock });
  const replicas: Record<string, string> = {};

  beforeAll(async () => {
    rig = await openGateway(target, { clock, name: 'shared' });
    ({ db, scheduler, tokens, baseURL } = rig);
    admin = await createStaff(db, 'admin');
    reviewer = await createStaff(db, 'reviewer');
    // Llama in Jena, Mistral in Kajaani (Finland): started by an admin, as the Models page does.
    for (const [model, resourceClassId] of [
      [LLAMA, 'h100'],
      [MISTRAL, 'b200'],
    ] as const) {
      const { jobId } = await staff(admin).models.start({ modelId: model, resourceClassId });
      const [job] = await db.select({ siteId: jobs.siteId, projectId: jobs.projectId }).from(jobs).where(eq(jobs.id, jobId));
      await waitForModelServer({ db, scheduler, tick, jobId, siteId: job!.siteId, projectId: job!.projectId });
      replicas[model] = jobId;
    }
  }, 120_000);
  afterAll(async () => {
    await rig?.close();
  });

  const company = async (name: string) => {
    const tenant = await createTenant(db, { kind: 'company', name: `${name} ${randomUUID().slice(0, 6)}` });
    await staff(admin).staff.changeTenantStatus({ orgId: tenant.orgId, action: 'verify', reason: 'Company checked' });
    return tenant;
  };
  const creditLine = async (tenant: Tenant, euros: number, residency?: 'DE' | 'EU') => {
    const project = await callerFor(db, { userId: tenant.userId, orgId: tenant.orgId, now: clock }).project.create({ title: `Calls ${randomUUID().slice(0, 6)}`, abstract: 'Calling the centre’s models.', workloadKind: 'inference', members: [], ...(residency ? { dataResidency: residency } : {}) });
    const line = await staff(admin).staff.grantCreditLine({ projectId: project.id, amountEuros: euros, periodStart: '2026-01-01', periodEnd: '2027-01-01', reason: 'Credit line for tests' });
    return { projectId: project.id, allocationId: line.id };
  };

  it('runs a shared model as a service of the centre’s own tenant, on the class asked for', async () => {
    const rows = await db.select({ id: jobs.id, servedModel: jobs.servedModel, resourceClassId: jobs.resourceClassId, state: jobs.state, centre: organisations.centre }).from(jobs).innerJoin(organisations, eq(organisations.id, jobs.orgId)).where(eq(jobs.id, replicas[LLAMA]!));
    expect(rows).toEqual([{ id: replicas[LLAMA], servedModel: LLAMA, resourceClassId: 'h100', state: 'RUNNING', centre: true }]);
    await expect(staff(admin).models.start({ modelId: 'centre/no-such-model' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(staff(admin).models.start({ modelId: LLAMA, resourceClassId: 'h100-ch' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(staff(reviewer).models.start({ modelId: LLAMA })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('lets a company list and call it, and charges the catalogue’s company price on its credit line', { timeout: 60_000 }, async () => {
    const buyer = await company('Shared Buyer GmbH');
    const paying = await creditLine(buyer, 100);
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(buyer, ['inference'], { projectId: paying.projectId }), maxRetries: 0 });
    const listed = await client.models.list();
    expect(listed.data.map((m) => [m.id, m.owned_by])).toEqual([
      [LLAMA, 'centre'],
      [MISTRAL, 'centre'],
    ]);
    const answer = await client.chat.completions.create({ model: LLAMA, messages: [{ role: 'user', content: 'Say hello from the centre' }], max_tokens: 40 });
    expect(answer.usage!.completion_tokens).toBeGreaterThan(0);
    const [call] = await db.select().from(modelCalls).where(eq(modelCalls.allocationId, paying.allocationId));
    const price = configuredCatalogue().inference.sharedModels.find((m) => m.id === LLAMA)!.prices.company;
    expect(call).toMatchObject({ shared: true, model: LLAMA, status: 'settled', siteId: 'de-jena', serviceJobId: replicas[LLAMA], inputCentsPerMTokens: price.inputCentsPerMTokens, outputCentsPerMTokens: price.outputCentsPerMTokens });
    expect(call!.costMicro).toBe(callCostMicro(microPrice(price, 'cents', null), { prompt: answer.usage!.prompt_tokens, completion: answer.usage!.completion_tokens }));
    expect(call!.chargedAmount).toBe(chargeWithCarry(0, call!.costMicro));
    const line = (await db.select().from(allocations).where(eq(allocations.id, paying.allocationId)))[0]!;
    expect(balanceOfRow(line)).toEqual(await ledgerSums(db, paying.allocationId));
    expect(line.reserved).toBe(0);
  });

  it('makes a research group pay in GPU-seconds at the academic price and its class’s tariff', { timeout: 60_000 }, async () => {
    const lab = await createTenant(db, { name: `Shared Lab ${randomUUID().slice(0, 6)}` });
    const { projectId, allocationId } = await activeAllocation(db, lab, admin, { gpuHours: 10, today: TODAY });
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(lab, ['inference'], { projectId }), maxRetries: 0 });
    await client.embeddings.create({ model: LLAMA, input: Array.from({ length: 20 }, () => 'cell '.repeat(2000)) });
    const [call] = await db.select().from(modelCalls).where(eq(modelCalls.allocationId, allocationId));
    const price = configuredCatalogue().inference.sharedModels.find((m) => m.id === LLAMA)!.prices.academic;
    const h100 = configuredCatalogue().resourceClasses.find((c) => c.id === 'h100')!;
    expect(call).toMatchObject({ shared: true, unit: 'gpu_seconds', promptTokens: 40_000 });
    expect(call!.costMicro).toBe(callCostMicro(microPrice(price, 'gpu_seconds', h100.tariffs.academic), { prompt: 40_000, completion: 0 }));
    expect(balanceOfRow((await db.select().from(allocations).where(eq(allocations.id, allocationId)))[0]!)).toEqual(await ledgerSums(db, allocationId));
  });

  it('never serves a DE-only project from Finland: the refusal names the residency; Jena serves it', { timeout: 60_000 }, async () => {
    const careful = await company('Careful Shared GmbH');
    const germanOnly = await creditLine(careful, 100, 'DE');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(careful, ['inference'], { projectId: germanOnly.projectId }), maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual([LLAMA]);
    const refused = await client.chat.completions.create({ model: MISTRAL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('residency_unavailable');
    expect((refused as Error).message).toContain('in Germany (residency DE)');
    expect((await client.chat.completions.create({ model: LLAMA, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 })).choices).toHaveLength(1);
    expect(await db.select({ id: modelCalls.id }).from(modelCalls).where(and(eq(modelCalls.allocationId, germanOnly.allocationId), eq(modelCalls.model, MISTRAL)))).toHaveLength(0);
  });

  it('keeps the names: a tenant’s service may not take a shared model’s', async () => {
    const lab = await createTenant(db, { name: `Name Lab ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, lab, admin, { gpuHours: 10, today: TODAY });
    const submit = callerFor(db, { userId: lab.userId, orgId: lab.orgId, scheduler, now: clock }).job.submit({
      allocationId,
      resourceClassId: 'h100',
      name: 'impostor',
      kind: 'inference',
      servedModel: LLAMA,
      gpus: 1,
      nodes: 1,
      walltimeMinutes: 60,
      image: 'vllm/vllm-openai:v0.6.3',
      command: 'vllm serve',
      env: {},
      idempotencyKey: randomUUID(),
    });
    await expect(submit).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { key: 'job.servedModelShared', field: 'servedModel' } });
  });

  it('shows tenants where a model runs and staff each replica; stopping one charges its GPU time to the centre', { timeout: 60_000 }, async () => {
    const viewer = await company('Viewer GmbH');
    const seen = await callerFor(db, { userId: viewer.userId, orgId: viewer.orgId, now: clock }).models.shared();
    const llama = seen.find((m) => m.id === LLAMA)!;
    expect(llama.servedAt).toEqual([{ siteId: 'de-jena', siteName: expect.any(String) as string, replicas: 1 }]);
    expect(llama.replicas).toEqual([]);
    expect(llama.calls24h).toBeNull();
    const asStaff = (await staff(admin).models.shared()).find((m) => m.id === LLAMA)!;
    expect(asStaff.replicas.map((r) => r.jobId)).toEqual([replicas[LLAMA]]);
    expect(asStaff.calls24h).toBeGreaterThanOrEqual(3);

    const [job] = await db.select({ allocationId: jobs.allocationId }).from(jobs).where(eq(jobs.id, replicas[LLAMA]!));
    await staff(admin).models.stop({ jobId: replicas[LLAMA]! });
    for (let i = 0; i < 50; i++) {
      await reconcileOnce(db, scheduler, tick());
      const [row] = await db.select({ state: jobs.state, settledAt: jobs.settledAt }).from(jobs).where(eq(jobs.id, replicas[LLAMA]!));
      if (row?.settledAt) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [ended] = await db.select({ state: jobs.state, settledAt: jobs.settledAt }).from(jobs).where(eq(jobs.id, replicas[LLAMA]!));
    expect(ended).toMatchObject({ state: 'COMPLETED', settledAt: expect.any(Date) as Date });
    const centreLine = (await db.select().from(allocations).where(eq(allocations.id, job!.allocationId)))[0]!;
    // The time it ran, borne by the centre: one GPU from its start to its stop.
    const [timed] = await db.select({ gpuSeconds: jobs.gpuSeconds }).from(jobs).where(eq(jobs.id, replicas[LLAMA]!));
    expect(centreLine.charged).toBeGreaterThan(0);
    expect(centreLine.charged).toBe(timed!.gpuSeconds);
    expect(balanceOfRow(centreLine)).toEqual(await ledgerSums(db, centreLine.id));
    await expect(callerFor(db, { userId: viewer.userId, orgId: viewer.orgId, now: clock }).models.stop({ jobId: replicas[MISTRAL]! })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
