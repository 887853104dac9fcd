// Model calls in the ledger (issue #29), through the whole path: the official `openai` client, the REST
// handler, the gateway, a model server the simulated cluster started, the database. Prices are this
// file's catalogue's (vi.hoisted below: €2.50 per million tokens in, €10 out for companies), so calls cost
// what a test can see. What is checked:
// - the ledger's charges for calls are ⌊Σ usage × price⌋, each call's reservation released, the cached
//   balance equal to the ledger's sums; a research project pays in GPU-seconds at its class's tariff;
// - a client that leaves mid-stream pays the tokens it was sent;
// - 200 streamed calls at once against a €1 credit line: never below zero, the refused ones 402 in
//   OpenAI's shape with the figures, cached balances equal to the ledger;
// - a DE-only project never reaches a replica in Finland: refused, the error names the residency.
import { randomUUID } from 'node:crypto';
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import OpenAI from 'openai';
import { countChatTokens } from '~/bin/portal-model-server/tokens.mjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '~/db/client';
import { allocations, ledgerEntries, modelCalls } from '~/db/schema';
import type { SimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { configuredCatalogue } from '~/server/catalogue';
import { MICRO } from '~/server/core/inference/metering';
import { AppError } from '~/server/errors';
import { invoiceContent } from '~/server/documents/invoice-content';
import { translate } from '~/server/i18n';
import { issueInvoice, loadInvoiceForMail } from '~/server/services/billing/invoices';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { MODEL_CALL_LOST_AFTER_MS, openModelCall, releaseLostModelCalls, settleModelCall } from '~/server/services/inference/metering';
import { balanceOfRow, ledgerSums } from '~/server/services/ledger/ledger';
import { openGateway, type GatewayRig } from '~/server/testing/gateway';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets } from '~/server/testing/harness';
import { startModelService } from '~/server/testing/model-services';

// This file's catalogue: the demo centre's, with token prices large enough to see.
await vi.hoisted(async () => {
  const { writeFileSync } = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const { DEFAULT_CATALOGUE } = await import('~/server/catalogue');
  const file = path.join(os.tmpdir(), `portal-metering-catalogue-${process.pid}-${Date.now()}.json`);
  const inference = {
    ...DEFAULT_CATALOGUE.inference,
    ownModels: { academic: { inputCentsPerMTokens: 100, outputCentsPerMTokens: 400 }, company: { inputCentsPerMTokens: 250, outputCentsPerMTokens: 1000 } },
  };
  writeFileSync(file, JSON.stringify({ ...DEFAULT_CATALOGUE, inference }));
  process.env.PORTAL_CATALOGUE = file;
  // Tokens a minute per API token: enough for every test here but the one that passes it.
  process.env.INFERENCE_TOKENS_PER_MINUTE = '5000000';
});

const TODAY = '2026-12-01';
const COMPANY_PRICE = { input: 250, output: 1000 };

type Tenant = Awaited<ReturnType<typeof createTenant>>;

describe.each(dbTargets())('model calls in the ledger on %s', (target) => {
  let rig: GatewayRig;
  let db: Db;
  let scheduler: SimulatedScheduler;
  let baseURL: string;
  let tokens: GatewayRig['tokens'];
  let admin: { userId: string };
  let company: Tenant;
  /** The company's project whose big credit line runs its services. */
  let servicesProject: { projectId: string; allocationId: string };
  let now = new Date(`${TODAY}T09:00:00Z`);
  const clock = () => now;

  beforeAll(async () => {
    expect(configuredCatalogue().inference.ownModels.company.outputCentsPerMTokens).toBe(COMPANY_PRICE.output);
    rig = await openGateway(target, { clock, name: 'metering' });
    ({ db, scheduler, tokens, baseURL } = rig);
    admin = await createStaff(db, 'admin');
    company = await createTenant(db, { kind: 'company', name: `Metering GmbH ${randomUUID().slice(0, 6)}` });
    await callerFor(db, { userId: admin.userId, now: clock }).staff.changeTenantStatus({ orgId: company.orgId, action: 'verify', reason: 'Company checked' });
    servicesProject = await creditLine(company, 10_000, 'Services');
  });
  afterAll(async () => {
    await rig?.close();
  });

  /** creditLine makes a project of the company with a credit line of `euros` (DE-only with `residency`). */
  async function creditLine(tenant: Tenant, euros: number, title: string, residency?: 'DE' | 'EU') {
    const api = callerFor(db, { userId: tenant.userId, orgId: tenant.orgId, now: clock });
    const project = await api.project.create({ title: `${title} ${randomUUID().slice(0, 6)}`, abstract: 'Serving our fine-tuned models.', workloadKind: 'inference', members: [], ...(residency ? { dataResidency: residency } : {}) });
    const line = await callerFor(db, { userId: admin.userId, now: clock }).staff.grantCreditLine({ projectId: project.id, amountEuros: euros, periodStart: '2026-01-01', periodEnd: '2027-01-01', reason: 'Credit line for tests' });
    return { projectId: project.id, allocationId: line.id };
  }

  /** startService submits an inference service and waits until its model server listens. */
  const startService = async (owner: Tenant, on: { projectId: string; allocationId: string }, model: string, where?: { resourceClassId: string; siteId: string }) =>
    (await startModelService({ db, scheduler, owner, on, model, where, now: clock, tick: () => (now = new Date(now.getTime() + 1000)) })).jobId;

  /** The ledger's entries of model calls on an allocation, summed per kind. */
  async function callEntries(allocationId: string): Promise<Record<string, number>> {
    const rows = await db
      .select({ kind: ledgerEntries.kind, amount: sql<string>`sum(${ledgerEntries.amount})` })
      .from(ledgerEntries)
      .where(and(eq(ledgerEntries.allocationId, allocationId), isNotNull(ledgerEntries.modelCallId)))
      .groupBy(ledgerEntries.kind);
    return Object.fromEntries(rows.map((r) => [r.kind, Number(r.amount)]));
  }

  async function allocationRow(id: string) {
    return (await db.select().from(allocations).where(eq(allocations.id, id)))[0]!;
  }

  /** The cached balance equals the ledger's sums, and nothing is held below zero. */
  async function expectBalanced(allocationId: string) {
    const row = await allocationRow(allocationId);
    expect(balanceOfRow(row)).toEqual(await ledgerSums(db, allocationId));
    expect(row.granted - row.charged - row.reserved - row.expired).toBeGreaterThanOrEqual(0);
  }

  it('charges each call its usage × price: the ledger holds ⌊Σ⌋ to the cent, every reservation released', { timeout: 90_000 }, async () => {
    await startService(company, servicesProject, 'metering/chat-7b');
    const paying = await creditLine(company, 100, 'Chatbot');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId: paying.projectId }), maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'What does a GPU-hour cost here?' }];
    const usages: { prompt: number; completion: number }[] = [];
    const whole = await client.chat.completions.create({ model: 'metering/chat-7b', messages, max_tokens: 40 });
    usages.push({ prompt: whole.usage!.prompt_tokens, completion: whole.usage!.completion_tokens });
    // Streamed, with usage asked for and without (the gateway asks on the client's behalf): settled before the stream's end reaches the client.
    for (const includeUsage of [true, false]) {
      let pieces = 0;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of await client.chat.completions.create({ model: 'metering/chat-7b', messages, max_tokens: 40, stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) })) {
        if (chunk.choices[0]?.delta.content) pieces += 1;
        if (chunk.usage) usage = chunk.usage;
      }
      if (includeUsage) expect(usage!.completion_tokens).toBe(pieces);
      usages.push({ prompt: whole.usage!.prompt_tokens, completion: pieces });
    }
    const completion = await client.completions.create({ model: 'metering/chat-7b', prompt: 'The invoice says', max_tokens: 12 });
    usages.push({ prompt: completion.usage!.prompt_tokens, completion: completion.usage!.completion_tokens });
    // A large embedding: 30 inputs of 4,000 tokens, 120,000 in all, €0.30 at €2.50 per million.
    const embedded = await client.embeddings.create({ model: 'metering/chat-7b', input: Array.from({ length: 30 }, (_, i) => `budget${i} `.repeat(4000)) });
    expect(embedded.usage.prompt_tokens).toBe(120_000);
    usages.push({ prompt: embedded.usage.prompt_tokens, completion: 0 });

    const rows = await db.select().from(modelCalls).where(eq(modelCalls.allocationId, paying.allocationId));
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.status === 'settled' && r.unit === 'cents' && r.projectId === paying.projectId && r.siteId === 'de-jena')).toBe(true);
    expect(rows.map((r) => ({ prompt: r.promptTokens, completion: r.completionTokens })).sort((a, b) => a.prompt - b.prompt || a.completion - b.completion)).toEqual(
      [...usages].sort((a, b) => a.prompt - b.prompt || a.completion - b.completion),
    );
    const sumMicro = usages.reduce((s, u) => s + u.prompt * COMPANY_PRICE.input + u.completion * COMPANY_PRICE.output, 0);
    expect(rows.reduce((s, r) => s + r.costMicro, 0)).toBe(sumMicro);
    const entries = await callEntries(paying.allocationId);
    // The ledger: ⌊Σ usage × price⌋ cents charged, every reservation released.
    expect(entries.charge).toBe(Math.floor(sumMicro / MICRO));
    expect(entries.charge).toBeGreaterThanOrEqual(30);
    expect(entries.reserve).toBe(entries.release);
    expect(rows.reduce((s, r) => s + r.chargedAmount, 0)).toBe(entries.charge);
    const line = await allocationRow(paying.allocationId);
    expect(line.inferenceMicro).toBe(sumMicro);
    expect(line.reserved).toBe(0);
    expect(line.charged).toBe(entries.charge);
    await expectBalanced(paying.allocationId);
    // Energy and CO2e per call from the class's energy per token, Jena's PUE and grid.
    const big = rows.find((r) => r.endpoint === 'embedding')!;
    expect(big.energyUwh).toBe(Math.floor((120_000 * 80 * 1080 * 2 + 1000) / 2000));
    expect(big.co2eUg).toBe(Math.floor((big.energyUwh * 380 * 2 + 1000) / 2000));
  });

  it('charges a client that leaves mid-stream the tokens it was sent', { timeout: 60_000 }, async () => {
    await startService(company, servicesProject, 'metering/long-7b');
    const paying = await creditLine(company, 100, 'Streams');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId: paying.projectId }), maxRetries: 0 });
    const abort = new AbortController();
    const long = await client.chat.completions.create({ model: 'metering/long-7b', messages: [{ role: 'user', content: 'Tell me everything.' }], max_tokens: 2000, ignore_eos: true, stream: true } as OpenAI.ChatCompletionCreateParamsStreaming, { signal: abort.signal });
    let received = 0;
    await (async () => {
      for await (const chunk of long) {
        if (chunk.choices[0]?.delta.content) received += 1;
        if (received === 8) abort.abort();
      }
    })().catch(() => undefined);
    await expect.poll(async () => (await db.select().from(modelCalls).where(eq(modelCalls.allocationId, paying.allocationId)))[0]?.status, { timeout: 10_000 }).toBe('settled');
    const [call] = await db.select().from(modelCalls).where(eq(modelCalls.allocationId, paying.allocationId));
    expect(call!.aborted).toBe(true);
    // What the gateway passed on: at least what the client read, far from the 2,000 asked for.
    expect(call!.completionTokens).toBeGreaterThanOrEqual(received);
    expect(call!.completionTokens).toBeLessThan(200);
    expect(call!.promptTokens).toBeGreaterThan(0);
    expect(call!.costMicro).toBe(call!.promptTokens * COMPANY_PRICE.input + call!.completionTokens * COMPANY_PRICE.output);
    // Its worst case (2,000 tokens out: 2 cents) was reserved and released.
    expect(call!.reservedAmount).toBe(3);
    expect((await callEntries(paying.allocationId)).release).toBe(3);
    expect((await allocationRow(paying.allocationId)).reserved).toBe(0);
    await expectBalanced(paying.allocationId);
  });

  it('takes 200 streamed calls at once against a €1 line: never below zero, the rest refused with 402 and the figures', { timeout: 120_000 }, async () => {
    await startService(company, servicesProject, 'metering/race-7b');
    const paying = await creditLine(company, 1, 'One euro');
    const key = await tokens.mint(company, ['inference'], { projectId: paying.projectId });
    const client = new OpenAI({ baseURL, apiKey: key, maxRetries: 0 });
    // Each call may answer 8,000 tokens (€0.08 at €10 per million): its reservation is 9 cents; a euro holds 11 at once.
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        try {
          let pieces = 0;
          for await (const chunk of await client.chat.completions.create({ model: 'metering/race-7b', messages: [{ role: 'user', content: `race ${i}` }], max_tokens: 8000, stream: true })) {
            if (chunk.choices[0]?.delta.content) pieces += 1;
          }
          return { ok: true as const, pieces };
        } catch (error) {
          return { ok: false as const, error };
        }
      }),
    );
    const refused = outcomes.filter((o) => !o.ok);
    const answered = outcomes.filter((o) => o.ok);
    expect(answered.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    // Anything but the budget's refusal, with what it said (a failure names it).
    const otherwise = refused.map((r) => r.error as { status?: number; message?: string }).filter((e) => e.status !== 402);
    expect(otherwise.map((e) => `${e.status}: ${e.message}`)).toEqual([]);
    for (const r of refused) {
      const error = r.error as InstanceType<typeof OpenAI.APIError>;
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.status).toBe(402);
      expect(error.code).toBe('budget_exhausted');
      expect(error.type).toBe('insufficient_quota');
      expect(error.message).toMatch(/this needs €0\.09, €0(\.\d+)? remain on the credit line/);
    }
    const rows = await db.select().from(modelCalls).where(eq(modelCalls.allocationId, paying.allocationId));
    // Only the answered calls were written (a refusal rolls its row back with its reservation).
    expect(rows).toHaveLength(answered.length);
    expect(rows.every((r) => r.status === 'settled')).toBe(true);
    const sumMicro = rows.reduce((s, r) => s + r.costMicro, 0);
    const entries = await callEntries(paying.allocationId);
    expect(entries.charge ?? 0).toBe(Math.floor(sumMicro / MICRO));
    expect(entries.reserve).toBe(entries.release);
    const line = await allocationRow(paying.allocationId);
    expect(line.reserved).toBe(0);
    expect(line.charged).toBeLessThanOrEqual(line.granted);
    await expectBalanced(paying.allocationId);
  });

  it('decides calls reserving together each on what those before it took: the project budget, the person’s, the monthly cap', { timeout: 60_000 }, async () => {
    // Each call's worst case is 9 cents (8,000 tokens out at €10 per million): 40 at once against a limit of €1 leave 11.
    const call = (tenant: Tenant, projectId: string, i: number) =>
      openModelCall(db, { orgId: tenant.orgId, userId: tenant.userId, tokenId: null, projectId, requestId: `batch-${i}`, model: 'metering/batch-7b', endpoint: 'chat', worst: { prompt: 10, completion: 8000 }, resourceClassId: 'h100', now }).then(
        (c) => ({ ok: true as const, call: c }),
        (error: unknown) => ({ ok: false as const, error: error as AppError }),
      );
    const verified = async (name: string) => {
      const tenant = await createTenant(db, { kind: 'company', name: `${name} ${randomUUID().slice(0, 6)}` });
      await callerFor(db, { userId: admin.userId, now: clock }).staff.changeTenantStatus({ orgId: tenant.orgId, action: 'verify', reason: 'Company checked' });
      return tenant;
    };
    const owner = (tenant: Tenant) => callerFor(db, { userId: tenant.userId, orgId: tenant.orgId, now: clock });
    const budgeted = await verified('Project budget GmbH');
    const onProject = await creditLine(budgeted, 100, 'Budgeted');
    await owner(budgeted).project.setBudget({ projectId: onProject.projectId, monthlyEuros: 1, totalEuros: null, costCentre: null, purchaseOrder: null });
    const limited = await verified('Person limit GmbH');
    const onPerson = await creditLine(limited, 100, 'Limited');
    await owner(limited).organisation.setSpendLimit({ userId: limited.userId, monthlyEuros: 1 });
    const capped = await verified('Monthly cap GmbH');
    const onCap = await creditLine(capped, 100, 'Capped');
    await owner(capped).allocation.setMonthlyCap({ capEuros: 1, reason: 'A euro a month for this test' });
    const cases = [
      { tenant: budgeted, on: onProject, refusal: 'budget.refused.projectMonthly' },
      { tenant: limited, on: onPerson, refusal: 'budget.refused.personMonthly' },
      { tenant: capped, on: onCap, refusal: 'ledger.monthlyCap' },
    ];
    for (const c of cases) {
      const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => call(c.tenant, c.on.projectId, i)));
      const accepted = outcomes.filter((o) => o.ok);
      const refusals = outcomes.filter((o) => !o.ok).map((o) => (o.error instanceof AppError ? `${o.error.key} ${JSON.stringify(o.error.params)}` : String(o.error)));
      expect(accepted, c.refusal).toHaveLength(11);
      expect(refusals.length, c.refusal).toBe(29);
      for (const r of refusals) expect(r).toMatch(new RegExp(`^${c.refusal.replace(/\./g, '\\.')} .*"needed":0\\.09,"remaining":0\\.01`));
      expect(await callEntries(c.on.allocationId)).toEqual({ reserve: 99 });
      expect((await allocationRow(c.on.allocationId)).reserved).toBe(99);
      await expectBalanced(c.on.allocationId);
      // Only the accepted calls have rows.
      expect(await db.select({ id: modelCalls.id }).from(modelCalls).where(eq(modelCalls.allocationId, c.on.allocationId))).toHaveLength(11);
      // Answered with nothing used: every reservation back.
      for (const a of accepted) if (a.ok) await settleModelCall(db, a.call, { promptTokens: 0, completionTokens: 0, httpStatus: 200, aborted: false, replica: null, now });
      expect(await callEntries(c.on.allocationId)).toEqual({ reserve: 99, release: 99 });
      await expectBalanced(c.on.allocationId);
    }
  });

  it('never serves a DE-only project from Finland: refused, naming the residency; a replica in Germany serves it', { timeout: 90_000 }, async () => {
    const finnish = await startService(company, servicesProject, 'metering/eu-7b', { resourceClassId: 'b200', siteId: 'fi-kajaani' });
    const germanOnly = await creditLine(company, 100, 'Patient records', 'DE');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(company, ['inference'], { projectId: germanOnly.projectId }), maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).not.toContain('metering/eu-7b');
    const refused = await client.chat.completions.create({ model: 'metering/eu-7b', messages: [{ role: 'user', content: 'Hallo' }], max_tokens: 5 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('residency_unavailable');
    expect((refused as Error).message).toMatch(/in Germany \(residency DE\)/);
    expect(await db.select().from(modelCalls).where(eq(modelCalls.allocationId, germanOnly.allocationId))).toEqual([]);

    // A replica in Jena: every call of the DE project goes there, none to Kajaani.
    await startService(company, servicesProject, 'metering/eu-7b');
    expect((await client.models.list()).data.map((m) => m.id)).toContain('metering/eu-7b');
    for (let i = 0; i < 6; i++) await client.chat.completions.create({ model: 'metering/eu-7b', messages: [{ role: 'user', content: `Hallo ${i}` }], max_tokens: 5 });
    const calls = await db.select().from(modelCalls).where(eq(modelCalls.allocationId, germanOnly.allocationId));
    expect(calls).toHaveLength(6);
    expect(calls.every((c) => c.siteId === 'de-jena' && c.serviceJobId !== finnish)).toBe(true);
  });

  it('bills on the invoice exactly the tokens and euros the usage page shows', { timeout: 90_000 }, async () => {
    const billed = await createTenant(db, { kind: 'company', name: `Billing GmbH ${randomUUID().slice(0, 6)}` });
    await callerFor(db, { userId: admin.userId, now: clock }).staff.changeTenantStatus({ orgId: billed.orgId, action: 'verify', reason: 'Company checked' });
    const services = await creditLine(billed, 10_000, 'Services');
    const jobId = await startService(billed, services, 'billing/support-7b');
    const paying = await creditLine(billed, 100, 'Support bot');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(billed, ['inference'], { projectId: paying.projectId }), maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'billing/support-7b', messages: [{ role: 'user', content: `Question ${i}` }], max_tokens: 30 });
    await client.embeddings.create({ model: 'billing/support-7b', input: Array.from({ length: 20 }, (_, i) => `ticket${i} `.repeat(4000)) });
    // The service ends (an invoice waits for the month's jobs to settle); the month is closed a minute later.
    const api = callerFor(db, { userId: billed.userId, orgId: billed.orgId, scheduler, now: clock });
    await api.job.cancel({ jobId });
    for (let i = 0; i < 5; i++) await reconcileOnce(db, scheduler, (now = new Date(now.getTime() + 1000)));
    now = new Date(now.getTime() + 60_000);
    const day = now.toISOString().slice(0, 10);
    const report = await api.report.modelCalls({ period: { from: TODAY, to: day } });
    expect(report.rows).toHaveLength(1);
    const row = report.rows[0]!;
    expect(row).toMatchObject({ projectId: paying.projectId, model: 'billing/support-7b', unit: 'cents', calls: 4 });
    expect(row.inputTokens).toBeGreaterThan(80_000);
    expect(row.charged).toBe((await callEntries(paying.allocationId)).charge);
    expect(row.charged).toBeGreaterThanOrEqual(20);
    const csv = await api.report.modelCallsCsv({ period: { from: TODAY, to: day } });
    expect(csv.csv).toContain(`billing/support-7b,4,${row.inputTokens},${row.outputTokens},${(row.charged / 100).toFixed(2)},`);

    // The centre dashboard: the same figures under the tenant's name.
    const centre = await callerFor(db, { userId: admin.userId, now: clock }).centre.modelCalls({ from: TODAY, to: day });
    expect(centre.rows.find((r) => r.orgId === billed.orgId)).toEqual({ orgId: billed.orgId, name: billed.orgName, kind: 'company', model: 'billing/support-7b', unit: 'cents', calls: 4, inputTokens: row.inputTokens, outputTokens: row.outputTokens, charged: row.charged, energyUwh: row.energyUwh, co2eUg: row.co2eUg });
    expect(centre.totals.find((x) => x.unit === 'cents')!.charged).toBeGreaterThanOrEqual(row.charged);

    const issued = await issueInvoice(db, { orgId: billed.orgId, month: TODAY.slice(0, 7), now, closing: true });
    const invoice = await loadInvoiceForMail(db, issued!.id, day);
    const line = invoice.lines.find((l) => l.kind === 'tokens')!;
    expect(line).toMatchObject({ model: 'billing/support-7b', jobs: 4, inputTokens: row.inputTokens, outputTokens: row.outputTokens, inputCentsPerMTokens: 250, outputCentsPerMTokens: 1000, netCents: row.charged, description: 'Model calls, billing/support-7b' });
    // The page and the PDF show its tokens and prices; the e-invoice bills it as one lot at its amount.
    const content = invoiceContent(invoice, (key, params) => translate('en', key, params), 'en');
    const shown = content.rows.find((r) => r[1]!.startsWith('Model calls'))!;
    expect(shown[3]).toBe(`${row.inputTokens.toLocaleString('en')} in · ${row.outputTokens.toLocaleString('en')} out`);
    expect(shown[4]).toBe('€2.50 / €10.00 per M tokens');
    expect(shown[5]).toBe(`€${(row.charged / 100).toFixed(2)}`);
  });

  it('limits tokens a minute per API token in OpenAI’s headers: a call past it is 429, another token goes on', { timeout: 60_000 }, async () => {
    await startService(company, servicesProject, 'metering/limits-7b');
    const paying = await creditLine(company, 100, 'Limits');
    const key = await tokens.mint(company, ['inference'], { projectId: paying.projectId });
    const call = (body: object, apiKey = key) => fetch(`${baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'metering/limits-7b', messages: [{ role: 'user', content: 'Hi' }], ...body }) });
    const first = await call({ max_tokens: 10 });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('5000000');
    // Counted at its worst case: its input by the servers' rule and its max_tokens.
    expect(Number(first.headers.get('x-ratelimit-remaining-tokens'))).toBe(5_000_000 - countChatTokens([{ role: 'user', content: 'Hi' }]) - 10);
    expect(first.headers.get('x-ratelimit-reset-tokens')).toMatch(/^\d+s$/);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('100000');
    expect(first.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
    await first.text();
    // A call whose worst case passes what is left this minute.
    const refused = await call({ max_tokens: 5_000_000 });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    // Nothing was reserved or written for it; another token of the same person goes on.
    expect(await db.select().from(modelCalls).where(eq(modelCalls.allocationId, paying.allocationId))).toHaveLength(1);
    const other = await call({ max_tokens: 10 }, await tokens.mint(company, ['inference'], { projectId: paying.projectId }));
    expect(other.status).toBe(200);
    await other.text();
  });

  it('releases a call its gateway left open (the process died): the reservation back, nothing charged, once', async () => {
    const paying = await creditLine(company, 100, 'Crashed gateway');
    const call = await openModelCall(db, { orgId: company.orgId, userId: company.userId, tokenId: null, projectId: paying.projectId, requestId: 'req-lost', model: 'metering/chat-7b', endpoint: 'chat', worst: { prompt: 10, completion: 8000 }, resourceClassId: 'h100', now });
    expect(call.reserved).toBe(9);
    expect((await allocationRow(paying.allocationId)).reserved).toBe(9);
    // Not yet: an answer may still be on its way.
    expect(await releaseLostModelCalls(db, new Date(now.getTime() + 60 * 60_000))).toBe(0);
    expect(await releaseLostModelCalls(db, new Date(now.getTime() + MODEL_CALL_LOST_AFTER_MS + 60_000))).toBe(1);
    expect(await releaseLostModelCalls(db, new Date(now.getTime() + MODEL_CALL_LOST_AFTER_MS + 120_000))).toBe(0);
    const [row] = await db.select().from(modelCalls).where(eq(modelCalls.id, call.id));
    expect(row).toMatchObject({ status: 'lost', chargedAmount: 0, costMicro: 0 });
    expect(await callEntries(paying.allocationId)).toEqual({ reserve: 9, release: 9 });
    expect((await allocationRow(paying.allocationId)).reserved).toBe(0);
    await expectBalanced(paying.allocationId);
  });

  it('makes a research project pay its calls in GPU-seconds at its class’s tariff', { timeout: 60_000 }, async () => {
    const lab = await createTenant(db, { name: `Lab ${randomUUID().slice(0, 6)}` });
    const { projectId, allocationId } = await activeAllocation(db, lab, admin, { gpuHours: 100, today: TODAY });
    await startService(lab, { projectId, allocationId }, 'lab/llm-7b');
    const client = new OpenAI({ baseURL, apiKey: await tokens.mint(lab, ['inference'], { projectId }), maxRetries: 0 });
    const embedded = await client.embeddings.create({ model: 'lab/llm-7b', input: Array.from({ length: 25 }, () => 'cell '.repeat(2000)) });
    expect(embedded.usage.prompt_tokens).toBe(50_000);
    const [call] = await db.select().from(modelCalls).where(and(eq(modelCalls.orgId, lab.orgId), eq(modelCalls.endpoint, 'embedding')));
    // €1.00 per million in at the academic H100 tariff of €1.80 per GPU-hour: 2,000 µGPU-s a token; 50,000 tokens = 100 GPU-s.
    expect(call!.unit).toBe('gpu_seconds');
    expect(call!.inputMicroPerToken).toBe(2000);
    expect(call!.chargedAmount).toBe(100);
    expect((await callEntries(allocationId)).charge).toBe(100);
    await expectBalanced(allocationId);
  });
});
