// Model calls in the ledger (issue #29). A call through the gateway is paid from its token's project:
//
// 1. openModelCall, before the request is forwarded: the project's allocation that pays (its credit line,
//    else its GPU-hour allocation of the class the model runs on, else the one ending first) is locked in
//    the lock order (organisation, allocation; server/services/ledger/README.md) and the call's worst case
//    reserved with the limits of a job submission — tenant active, allocation usable today, the monthly
//    cap, the company's project and person budgets, the balance, no invoices overdue past the pause — in
//    the transaction that writes the call's row (`open`).
// 2. settleModelCall, when the answer ended (whole, streamed, or cut short by the client: what was sent):
//    the call's tokens are priced at the prices frozen on it, the allocation's meter (`inference_micro`)
//    moved and the whole units it passed charged (core/inference/metering.ts chargeWithCarry), the
//    reservation released; the row becomes `settled` with its tokens, cost, energy and CO2e — once.
// 3. releaseLostModelCalls, in the worker: a call still `open` long after any answer could have ended (its
//    gateway process died) is released and charged nothing (`lost`).
//
// Neither prompt nor answer is stored: a call's row has its counts only.
import { randomUUID } from 'node:crypto';
import { and, asc, eq, gt, inArray, lt, lte, sql } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, modelCalls, organisations, projects, tariffs } from '~/db/schema';
import { configuredCatalogue, type Catalogue } from '~/server/catalogue';
import { callCostMicro, callFootprint, chargeWithCarry, microPrice, reservationFor, type Endpoint, type TokenPrice } from '~/server/core/inference/metering';
import { env } from '~/server/env.js';
import { AppError } from '~/server/errors';
import { logger } from '~/server/observability/log';
import { overdueInvoicesBlocking } from '~/server/services/billing/payments';
import { alertSpending, checkSpendingLimits, spendingFigures, spendingLimitsOf } from '~/server/services/billing/spending-limits';
import type { SpendingLimit } from '~/server/core/billing/spending-limits';
import { appendBatchedReservations, balanceOfRow, confirmReservation, decideBatchedReservation, lockAllocation, lockOrganisation, monthSpendCents, settleModelCallsOnLocked, startModelCallReservation, type LockedOrganisation } from '~/server/services/ledger/ledger';
import { groupCommit } from '~/server/services/group-commit';
import { keptFor } from '~/server/services/kept';
import { inTransaction } from '~/server/services/transaction';

/** A call still open this long after it began is taken as lost (the gateway ends every answer well before: MODEL_CALL_MAX_MS). */
export const MODEL_CALL_LOST_AFTER_MS = 2 * 3600_000;

/** The longest a call may take, first byte to last, before the gateway ends it. */
export const MODEL_CALL_MAX_MS = 3600_000;

export interface OpenCallInput {
  orgId: string;
  userId: string;
  /** The API token it came with (null: none, as in tests of the ledger alone). */
  tokenId: string | null;
  projectId: string;
  requestId: string;
  model: string;
  endpoint: Endpoint;
  /** The most the call may use (core worstCaseTokens). */
  worst: { prompt: number; completion: number };
  /** The resource class the model runs on (its first replica's): which GPU-hour allocation pays, when the project has several. */
  resourceClassId: string | null;
  /** One of the centre's shared models (priced by the catalogue's entry), not the tenant's own service. */
  shared?: boolean;
  now: Date;
}

/** An open call: what settleModelCall needs. */
export interface OpenCall {
  id: string;
  allocationId: string;
  reserved: number;
  /** Priced at nothing (a research project's own service): no ledger rows, no locks, only the call's row. */
  free?: boolean;
  /** The energy a token takes where it runs (µWh), frozen on the call. */
  uwhPerToken?: number;
}

/** How long a process reuses which allocation pays a project's calls (its status and period are decided again under its lock). */
const PAYING_TTL_MS = 2000;
type Paying = NonNullable<Awaited<ReturnType<typeof readPayingAllocation>>>;
const keptPaying = keptFor<Paying | null>('paying-allocations', PAYING_TTL_MS);
const keptOverdue = keptFor<string[]>('overdue-invoices', PAYING_TTL_MS);

/** payingAllocation is readPayingAllocation kept PAYING_TTL_MS per project, class and day: a busy model's calls read it once a second or two. */
function payingAllocation(db: Db, input: OpenCallInput, today: string): Promise<Paying | null> {
  return keptPaying(`${input.orgId}\n${input.projectId}\n${input.resourceClassId ?? ''}\n${today}`, () => readPayingAllocation(db, input, today));
}

/** overdueBlocking is overdueInvoicesBlocking kept PAYING_TTL_MS per tenant and day (an invoice's pause may start a second or two late). */
function overdueBlocking(db: Db, orgId: string, today: string, blockDays: number | null): Promise<string[]> {
  return keptOverdue(`${orgId}\n${today}\n${blockDays ?? ''}`, () => overdueInvoicesBlocking(db, orgId, today, blockDays));
}

/** The allocation a project's calls pay from today, with the prices of the tenant's kind and the tenant's status. */
async function readPayingAllocation(db: Db, input: OpenCallInput, today: string) {
  const rows = await db
    .select({ id: allocations.id, unit: allocations.unit, resourceClassId: allocations.resourceClassId, periodEnd: allocations.periodEnd, kind: organisations.kind, orgStatus: organisations.status, orgName: organisations.name, monthlyCapCents: organisations.monthlyCapCents, centsPerGpuHour: tariffs.centsPerGpuHour })
    .from(allocations)
    .innerJoin(projects, and(eq(projects.id, allocations.projectId), eq(projects.orgId, allocations.orgId)))
    .innerJoin(organisations, eq(organisations.id, allocations.orgId))
    .leftJoin(tariffs, and(eq(tariffs.resourceClassId, allocations.resourceClassId), eq(tariffs.tenantKind, organisations.kind)))
    .where(and(eq(allocations.projectId, input.projectId), eq(allocations.orgId, input.orgId), eq(allocations.status, 'active'), lte(allocations.periodStart, today), gt(allocations.periodEnd, today)))
    .orderBy(asc(allocations.periodEnd), asc(allocations.id));
  const rank = (r: (typeof rows)[number]) => (r.unit === 'cents' ? 0 : r.resourceClassId === input.resourceClassId ? 1 : 2);
  return rows.sort((a, b) => rank(a) - rank(b))[0] ?? null;
}

/** callPrice is what a call costs per million tokens: a shared model's price of the catalogue, else the tenant's own services' (a shared model no longer in the catalogue: refused). */
function callPrice(catalogue: Catalogue, kind: 'academic' | 'company', input: Pick<OpenCallInput, 'shared' | 'model'>): TokenPrice {
  if (!input.shared) return ownModelPrice(catalogue, kind);
  const model = catalogue.inference.sharedModels.find((m) => m.id === input.model);
  if (!model) throw new AppError('NOT_FOUND', 'sharedModels.unknown', { model: input.model });
  return model.prices[kind];
}

/** ownModelPrice is what a call to one of the tenant's own services costs per million tokens. */
export function ownModelPrice(catalogue: Catalogue, kind: 'academic' | 'company'): TokenPrice {
  return catalogue.inference.ownModels[kind];
}

/**
 * openModelCall reserves a call's worst case on its project's allocation and writes the call `open`; a
 * refusal (AppError) names the limit and its figures: no allocation usable today, the tenant not active,
 * the budget, the cap, a company budget, overdue invoices.
 */
export async function openModelCall(db: Db, input: OpenCallInput): Promise<OpenCall> {
  const today = input.now.toISOString().slice(0, 10);
  const allocation = await payingAllocation(db, input, today);
  if (!allocation) throw new AppError('PRECONDITION_FAILED', 'inference.noAllocation', {});
  const blockDays = allocation.kind === 'company' ? (env().INVOICE_OVERDUE_BLOCK_DAYS ?? null) : null;
  const overdue = await overdueBlocking(db, input.orgId, today, blockDays);
  if (overdue.length) throw new AppError('PRECONDITION_FAILED', 'inference.invoicesOverdue', { numbers: overdue.join(', ') });
  const catalogue = configuredCatalogue();
  const price = callPrice(catalogue, allocation.kind, input);
  const micro = microPrice(price, allocation.unit, allocation.centsPerGpuHour);
  const amount = reservationFor(callCostMicro(micro, input.worst));
  const uwhPerToken = input.resourceClassId ? (catalogue.inference.uwhPerToken[input.resourceClassId] ?? 0) : 0;
  const values = {
    orgId: input.orgId,
    projectId: input.projectId,
    allocationId: allocation.id,
    userId: input.userId,
    tokenId: input.tokenId,
    requestId: input.requestId,
    model: input.model,
    endpoint: input.endpoint,
    shared: input.shared === true,
    resourceClassId: input.resourceClassId,
    unit: allocation.unit,
    inputMicroPerToken: micro.inputMicroPerToken,
    outputMicroPerToken: micro.outputMicroPerToken,
    inputCentsPerMTokens: price.inputCentsPerMTokens,
    outputCentsPerMTokens: price.outputCentsPerMTokens,
    uwhPerToken,
    reservedAmount: amount,
    startedAt: input.now,
  };
  if (micro.inputMicroPerToken === 0 && micro.outputMicroPerToken === 0) {
    // Free: nothing to reserve or charge, so no lock; the tenant's status as read a moment ago.
    if (allocation.orgStatus !== 'active') throw new AppError('FORBIDDEN', allocation.orgStatus === 'suspended' ? 'error.tenantSuspended' : 'error.tenantNotActive', { org: allocation.orgName });
    const [call] = await db.insert(modelCalls).values(values).returning({ id: modelCalls.id });
    return { id: call!.id, allocationId: allocation.id, reserved: 0, free: true, uwhPerToken };
  }
  return reserveInTurn(db, allocation, today, { id: randomUUID(), input, values, amount, uwhPerToken });
}

/** A call to reserve (reserveInTurn). */
interface Waiting {
  id: string;
  input: OpenCallInput;
  values: Omit<typeof modelCalls.$inferInsert, 'id'>;
  amount: number;
  uwhPerToken: number;
}

/**
 * reserveInTurn reserves a call's worst case on its allocation. The calls of one allocation reserve one
 * transaction at a time in a process (server/services/group-commit.ts): those that arrive while one
 * reserves reserve together next, each decided in its order on the rows as locked. A busy model's calls
 * so take the tenant's lock once per batch, not once each, and never queue on it inside one process.
 */
async function reserveInTurn(db: Db, allocation: Paying, today: string, call: Waiting): Promise<OpenCall> {
  await reserveTurn(`${allocation.id}\n${today}`, { db, allocation, today, call });
  return { id: call.id, allocationId: allocation.id, reserved: call.amount, uwhPerToken: call.uwhPerToken };
}

const reserveTurn = groupCommit<{ db: Db; allocation: Paying; today: string; call: Waiting }, null>('model-call-reservations', async (_key, items) => {
  const { db, allocation, today } = items[0]!;
  const calls = items.map((i) => i.call);
  const outcomes = calls.length === 1 ? [await reserveOne(db, allocation, today, calls[0]!)] : await reserveBatch(db, allocation, today, calls);
  return outcomes.map((o) => (o instanceof AppError ? { ok: false as const, error: o } : { ok: true as const, value: null }));
});

/** reserveOne reserves a lone call as a job's submission does: one pipelined batch of statements, decided on the rows as locked. */
async function reserveOne(db: Db, allocation: Paying, today: string, call: Waiting): Promise<'reserved' | AppError> {
  const { input, amount } = call;
  try {
    return await inTransaction(db, async (tx) => {
      // The locks in the lock order (organisation, then allocation; server/services/ledger/README.md), the
      // company's budgets read behind them, the call's row and its reservation, sent at once; then decided
      // on the rows as locked — a refusal rolls it all back.
      const locked = Promise.all([lockOrganisation(tx, input.orgId, allocation.unit), lockAllocation(tx, allocation.id)]);
      const budgets = allocation.unit === 'cents' ? spendingFigures(tx, { orgId: input.orgId, projectId: input.projectId, userId: input.userId, today }) : Promise.resolve(null);
      const inserted = tx.insert(modelCalls).values({ id: call.id, ...call.values }).execute();
      // (A call whose worst case costs nothing — e.g. embeddings where only output is priced — reserves nothing.)
      const pending = amount > 0 ? startModelCallReservation(tx, { allocationId: allocation.id, orgId: input.orgId, modelCallId: call.id, amount, actorUserId: input.userId, today, at: input.now }, allocation.unit, allocation.monthlyCapCents !== null) : null;
      const [[org, row], , figures, monthSpent] = await Promise.all([locked, inserted, budgets, pending?.monthSpent ?? Promise.resolve(null)]);
      checkCallable(org, row, today);
      if (!pending) return 'reserved' as const;
      // A credit line's call must fit the company's project and person budgets too, as a job's cost must.
      const limits = figures ? spendingLimitsOf(figures, { capCents: org.monthlyCapCents, spentCents: monthSpent }) : [];
      checkSpendingLimits(limits, amount);
      await confirmReservation(tx, org, row, { amount, orgId: org.id, today }, pending);
      if (figures) await alertSpending(tx, { orgId: org.id, projectId: input.projectId, userId: input.userId, today, amountCents: amount, limits, at: input.now });
      return 'reserved' as const;
    });
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
}

/** checkCallable refuses calls on a tenant not active or an allocation no longer usable today (as locked). */
function checkCallable(org: LockedOrganisation, row: { status: string; periodStart: string; periodEnd: string }, today: string): void {
  if (org.status !== 'active') throw new AppError('FORBIDDEN', org.status === 'suspended' ? 'error.tenantSuspended' : 'error.tenantNotActive', { org: org.name });
  if (row.status !== 'active' || today < row.periodStart || today >= row.periodEnd) throw new AppError('PRECONDITION_FAILED', 'inference.noAllocation', {});
}

/**
 * reserveBatch reserves several calls of one allocation in one transaction: the locks and the figures
 * read once, each call decided in its order on what those before it took (a refused call is left out,
 * the others go on), the accepted calls' rows and reservations written together.
 */
async function reserveBatch(db: Db, allocation: Paying, today: string, batch: Waiting[]): Promise<('reserved' | AppError)[]> {
  const { orgId, projectId } = batch[0]!.input;
  const users = [...new Set(batch.map((w) => w.input.userId))];
  return inTransaction(db, async (tx) => {
    const locked = Promise.all([lockOrganisation(tx, orgId, allocation.unit), lockAllocation(tx, allocation.id)]);
    const budgets = allocation.unit === 'cents' ? Promise.all(users.map((userId) => spendingFigures(tx, { orgId, projectId, userId, today }))) : Promise.resolve(null);
    const capped = allocation.unit === 'cents' && allocation.monthlyCapCents !== null ? monthSpendCents(tx, orgId, today) : Promise.resolve(null);
    const [[org, row], figures, spentRead] = await Promise.all([locked, budgets, capped]);
    // A cap set since the tenant was read: its month's spend now.
    const spent = spentRead ?? (allocation.unit === 'cents' && org.monthlyCapCents !== null ? await monthSpendCents(tx, orgId, today) : null);
    try {
      checkCallable(org, row, today);
    } catch (error) {
      if (error instanceof AppError) return batch.map(() => error);
      throw error;
    }
    let balance = balanceOfRow(row);
    let taken = 0;
    const takenBy = new Map<string, number>();
    const accepted: { call: Waiting; limits: SpendingLimit[] }[] = [];
    const outcomes = batch.map((call): 'reserved' | AppError => {
      const userId = call.input.userId;
      if (call.amount === 0) {
        accepted.push({ call, limits: [] });
        return 'reserved';
      }
      try {
        let limits: SpendingLimit[] = [];
        const own = figures?.[users.indexOf(userId)];
        if (own) {
          // The budgets as they stand after the calls accepted before this one.
          const mine = takenBy.get(userId) ?? 0;
          const after = { ...own, projectMonthSpentCents: own.projectMonthSpentCents + taken, projectTotalSpentCents: own.projectTotalSpentCents + taken, personMonthSpentCents: own.personMonthSpentCents + mine };
          limits = spendingLimitsOf(after, { capCents: org.monthlyCapCents, spentCents: spent === null ? null : spent + taken });
          checkSpendingLimits(limits, call.amount);
        }
        balance = decideBatchedReservation(org, row, balance, { amount: call.amount, orgId, today }, spent === null ? null : spent + taken);
        taken += call.amount;
        takenBy.set(userId, (takenBy.get(userId) ?? 0) + call.amount);
        accepted.push({ call, limits });
        return 'reserved';
      } catch (error) {
        if (error instanceof AppError) return error;
        throw error;
      }
    });
    if (accepted.length === 0) return outcomes;
    // The calls' rows, then their reservations (which name them): sent in that order, one after the other.
    const inserted = tx.insert(modelCalls).values(accepted.map(({ call }) => ({ id: call.id, ...call.values }))).execute();
    await Promise.all([inserted, appendBatchedReservations(tx, org, row, accepted.filter(({ call }) => call.amount > 0).map(({ call }) => ({ modelCallId: call.id, amount: call.amount, actorUserId: call.input.userId, at: call.input.now })), { today, spent })]);
    if (figures) {
      for (const { call, limits } of accepted.filter((a) => a.call.amount > 0)) {
        await alertSpending(tx, { orgId, projectId, userId: call.input.userId, today, amountCents: call.amount, limits, at: call.input.now });
      }
    }
    return outcomes;
  });
}

export interface CallOutcome {
  promptTokens: number;
  completionTokens: number;
  httpStatus: number;
  aborted: boolean;
  /** The replica that answered (null: none did). */
  replica: { jobId: string; siteId: string } | null;
  now: Date;
}

/**
 * settleModelCall prices an ended call's tokens, charges them and releases its reservation, once: a call no
 * longer open (settled, or released as lost) changes nothing. Returns what was charged, in the allocation's unit.
 */
export async function settleModelCall(db: Db, call: OpenCall, outcome: CallOutcome, status: 'settled' | 'lost' = 'settled'): Promise<{ charged: number } | null> {
  if (call.free) {
    const catalogue = configuredCatalogue();
    // Nothing reserved, nothing to charge: the call's row alone, once (only while open).
    const tokens = { prompt: Math.max(0, outcome.promptTokens), completion: Math.max(0, outcome.completionTokens) };
    const site = outcome.replica ? catalogue.sites.find((s) => s.id === outcome.replica!.siteId) : undefined;
    const footprint = callFootprint(tokens.prompt + tokens.completion, call.uwhPerToken ?? 0, site ?? null);
    const done = await db
      .update(modelCalls)
      .set({ status, httpStatus: outcome.httpStatus, aborted: outcome.aborted, promptTokens: tokens.prompt, completionTokens: tokens.completion, energyUwh: footprint.energyUwh, co2eUg: footprint.co2eUg, serviceJobId: outcome.replica?.jobId ?? null, siteId: outcome.replica?.siteId ?? null, endedAt: outcome.now })
      .where(and(eq(modelCalls.id, call.id), eq(modelCalls.status, 'open')))
      .returning({ id: modelCalls.id });
    return done.length ? { charged: 0 } : null;
  }
  return settleTurn(call.allocationId, { db, call, outcome, status });
}

/**
 * The calls of one allocation settle one transaction at a time in a process (server/services/group-commit.ts):
 * those ending while one settles settle together next — the allocation and their rows locked once, each
 * charged in its order the whole units the meter passes, one append to the ledger.
 */
const settleTurn = groupCommit<{ db: Db; call: OpenCall; outcome: CallOutcome; status: 'settled' | 'lost' }, { charged: number } | null>('model-call-settlements', async (allocationId, items) => {
  const { db } = items[0]!;
  const catalogue = configuredCatalogue();
  return inTransaction(db, async (tx) => {
    // The lock order: the allocation, then the calls' rows in id order (sent together: one round trip).
    const ids = [...new Set(items.map((i) => i.call.id))].sort();
    const [allocation, rows] = await Promise.all([lockAllocation(tx, allocationId), tx.select().from(modelCalls).where(inArray(modelCalls.id, ids)).orderBy(asc(modelCalls.id)).for('no key update').execute()]);
    const open = new Map(rows.filter((r) => r.status === 'open' && r.allocationId === allocationId).map((r) => [r.id, r]));
    let meter = allocation.inferenceMicro;
    const writes: Promise<unknown>[] = [];
    const ledger: Parameters<typeof settleModelCallsOnLocked>[2] = [];
    const outcomes = items.map(({ call, outcome, status }) => {
      const row = open.get(call.id);
      if (!row) return { ok: true as const, value: null };
      open.delete(call.id); // once, also when a batch names it twice
      const tokens = { prompt: Math.max(0, outcome.promptTokens), completion: Math.max(0, outcome.completionTokens) };
      const costMicro = callCostMicro({ inputMicroPerToken: row.inputMicroPerToken, outputMicroPerToken: row.outputMicroPerToken }, tokens);
      const charge = chargeWithCarry(meter, costMicro);
      meter += costMicro;
      const site = outcome.replica ? catalogue.sites.find((s) => s.id === outcome.replica!.siteId) : undefined;
      const footprint = callFootprint(tokens.prompt + tokens.completion, row.uwhPerToken, site ?? null);
      writes.push(
        tx
          .update(modelCalls)
          .set({
            status,
            httpStatus: outcome.httpStatus,
            aborted: outcome.aborted,
            promptTokens: tokens.prompt,
            completionTokens: tokens.completion,
            costMicro,
            chargedAmount: charge,
            energyUwh: footprint.energyUwh,
            co2eUg: footprint.co2eUg,
            serviceJobId: outcome.replica?.jobId ?? null,
            siteId: outcome.replica?.siteId ?? null,
            endedAt: outcome.now,
          })
          .where(eq(modelCalls.id, row.id))
          .execute(),
      );
      if (row.reservedAmount > 0 || charge > 0) ledger.push({ modelCallId: row.id, reserved: row.reservedAmount, charge, at: outcome.now });
      return { ok: true as const, value: { charged: charge } };
    });
    // The meter and the calls' rows go out beside the ledger's rows (different columns and rows: any order holds).
    if (meter !== allocation.inferenceMicro) writes.push(tx.update(allocations).set({ inferenceMicro: sql`${allocations.inferenceMicro} + ${meter - allocation.inferenceMicro}` }).where(eq(allocations.id, allocation.id)).execute());
    writes.push(settleModelCallsOnLocked(tx, allocation, ledger));
    await Promise.all(writes);
    return outcomes;
  });
});

/**
 * releaseLostModelCalls releases the calls still open MODEL_CALL_LOST_AFTER_MS after they began (their
 * gateway process ended before their answer did): their reservation goes back, nothing is charged, as the
 * tokens they used were never counted. Returns how many.
 */
export async function releaseLostModelCalls(db: Db, now: Date): Promise<number> {
  const lost = await db
    .select({ id: modelCalls.id, allocationId: modelCalls.allocationId, reserved: modelCalls.reservedAmount })
    .from(modelCalls)
    .where(and(eq(modelCalls.status, 'open'), lt(modelCalls.startedAt, new Date(now.getTime() - MODEL_CALL_LOST_AFTER_MS))))
    .limit(500);
  let released = 0;
  for (const call of lost) {
    const done = await settleModelCall(db, call, { promptTokens: 0, completionTokens: 0, httpStatus: 0, aborted: true, replica: null, now }, 'lost');
    if (done) released += 1;
  }
  if (released) logger().warn({ component: 'inference', released }, 'model calls whose gateway ended before their answer were released, charged nothing');
  return released;
}
