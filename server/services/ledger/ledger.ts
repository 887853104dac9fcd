// The GPU-hour ledger: every change to a budget is an appended row; the allocation row caches the
// balance and is updated under a row lock in the same transaction, so charged + reserved never
// exceed granted, under any concurrency. The maths lives in server/core/ledger.
import { and, eq, gte, inArray, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { reusable } from '~/db/reusable';
import { allocations, jobEvents, jobs, ledgerEntries, memberships, organisations, projectMembers, projects } from '~/db/schema';
import { applyEntry, available, settleAmounts, usedPermille, type Balance, type LedgerEntryValue, type LedgerKind, type LedgerRefusal } from '~/server/core/ledger/balance';
import { capMonth, lineChange, monthlyCapReached } from '~/server/core/billing/monthly-cap';
import { thresholdsCrossed } from '~/server/core/ledger/burn-down';
import { roundGpuHours } from '~/server/i18n/format';
import { AppError } from '~/server/errors';
import type { Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { stampAt } from '~/server/services/replay-clock';
import { budgetKeepers, notifyMembers } from '~/server/services/mail/notifications';
import { checkCapChoice, setCapWithLine, tellLineAndCap, type CapChoice } from '~/server/services/billing/credit-line-cap';
import { projectIdsOfAllocations, syncBudgetsAfterCommit, type BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';
import { inTransaction } from '~/server/services/transaction';

type AllocationRow = typeof allocations.$inferSelect;

/** balanceOfRow reads the cached balance of an allocation row. */
export function balanceOfRow(row: Pick<AllocationRow, 'granted' | 'charged' | 'reserved' | 'expired' | 'overrun'>): Balance {
  return { granted: row.granted, charged: row.charged, reserved: row.reserved, expired: row.expired, overrun: row.overrun };
}

/** displayAmount renders a budget amount for messages: GPU-hours (rounded as every page rounds them) or euros. */
export function displayAmount(unit: AllocationRow['unit'], amount: number): number {
  return unit === 'gpu_seconds' ? roundGpuHours(amount) : amount / 100;
}

/**
 * lockAllocation takes an allocation's row lock. NO KEY UPDATE, not UPDATE: it neither waits for nor
 * blocks the FOR KEY SHARE that inserting a job or a ledger row referencing it takes (that pairing
 * deadlocked concurrent submissions). Lock order: server/services/ledger/README.md, "Lock order".
 */
export async function lockAllocation(tx: Tx, allocationId: string): Promise<AllocationRow> {
  const [row] = await lockAllocationStatement(tx, { allocationId });
  if (!row) throw new AppError('NOT_FOUND', 'error.notFound');
  return row;
}

const lockAllocationStatement = reusable('ledger_lock_allocation', (db) => db.select().from(allocations).where(eq(allocations.id, sql.placeholder('allocationId'))).for('no key update'));

/** lockAllocations locks several allocations in id order (the one order every transaction uses). */
export async function lockAllocations(tx: Tx, allocationIds: string[]): Promise<void> {
  const ids = [...new Set(allocationIds)].sort();
  if (ids.length === 0) return;
  await tx.select({ id: allocations.id }).from(allocations).where(inArray(allocations.id, ids)).orderBy(allocations.id).for('no key update');
}

export interface LockedOrganisation {
  id: string;
  status: (typeof organisations.$inferSelect)['status'];
  name: string;
  monthlyCapCents: number | null;
  capReachedNoticedMonth: string | null;
}

/**
 * lockOrganisation locks a tenant row before its allocations. A reservation on a credit line (cents)
 * takes NO KEY UPDATE, so the tenant's reservations that count against its monthly cap run one at a
 * time; a GPU-hour reservation only needs the status to hold still and takes SHARE, so a research
 * group's submissions into different allocations do not queue behind each other. Status and cap
 * changes take NO KEY UPDATE and wait for both.
 */
export async function lockOrganisation(tx: Tx, orgId: string, unit: AllocationRow['unit']): Promise<LockedOrganisation> {
  const [org] = await (unit === 'cents' ? lockOrganisationForUpdate : lockOrganisationForShare)(tx, { orgId });
  if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
  return org;
}

const lockedOrganisation = (db: DbOrTx) =>
  db
    .select({ id: organisations.id, status: organisations.status, name: organisations.name, monthlyCapCents: organisations.monthlyCapCents, capReachedNoticedMonth: organisations.capReachedNoticedMonth })
    .from(organisations)
    .where(eq(organisations.id, sql.placeholder('orgId')));
const lockOrganisationForUpdate = reusable('ledger_lock_organisation_update', (db) => lockedOrganisation(db).for('no key update'));
const lockOrganisationForShare = reusable('ledger_lock_organisation_share', (db) => lockedOrganisation(db).for('share'));

function refusalError(row: AllocationRow, refusal: LedgerRefusal, field?: string): AppError {
  switch (refusal.reason) {
    case 'insufficient':
      return new AppError(
        'PRECONDITION_FAILED',
        row.unit === 'gpu_seconds' ? 'ledger.insufficientGpu' : 'ledger.insufficientCents',
        { needed: displayAmount(row.unit, refusal.needed), remaining: displayAmount(row.unit, refusal.available) },
        field,
      );
    case 'adjustBelowUsed':
      return new AppError('PRECONDITION_FAILED', 'ledger.adjustBelowUsed', { used: displayAmount(row.unit, refusal.used) }, field);
    case 'refundExceedsCharged':
      return new AppError('PRECONDITION_FAILED', 'ledger.refundExceedsCharged', { charged: displayAmount(row.unit, refusal.charged) }, field);
    default:
      return new AppError('BAD_REQUEST', 'ledger.invalidAmount', {}, field);
  }
}

interface EntryInput extends LedgerEntryValue {
  jobId?: string | null;
  /** A job array's task (its own release and charge), else null. */
  taskIndex?: number | null;
  /** A session's extension (its reserve, or the release that takes it back); absent: 0, the job's own. */
  extension?: number;
  /** A model call's reserve, release or charge (issue #29). */
  modelCallId?: string | null;
  actorUserId?: string | null;
  reason?: string | null;
  at?: Date;
}

/** appendEntries applies entries to a locked allocation, appends their rows and stores the new balance. */
async function appendEntries(tx: Tx, row: AllocationRow, entries: EntryInput[], field?: string): Promise<Balance> {
  let balance = balanceOfRow(row);
  for (const entry of entries) {
    const result = applyEntry(balance, entry);
    if (!result.ok) throw refusalError(row, result.refusal, field);
    balance = result.balance;
  }
  // One statement appends the rows; the database moves the allocation's cached balance by them in the same
  // statement (the trigger ledger_applied, drizzle/0064), to what applyEntry computed here on the locked row.
  await tx
    .insert(ledgerEntries)
    .values(
      entries.map((e) => ({
        allocationId: row.id,
        kind: e.kind,
        amount: e.amount,
        overrun: e.overrun ?? 0,
        jobId: e.jobId ?? null,
        taskIndex: e.taskIndex ?? null,
        extension: e.extension ?? 0,
        modelCallId: e.modelCallId ?? null,
        actorUserId: e.actorUserId ?? null,
        reason: e.reason ?? null,
        ...stampAt(e.at),
      })),
    );
  await noticeUsage(tx, row, balance);
  return balance;
}

/** Sends the 80 % and 100 % notices once each, to the project's PI and managers and the tenant's owners. */
async function noticeUsage(tx: Tx, row: AllocationRow, balance: Balance): Promise<void> {
  const crossed = thresholdsCrossed(row.noticedPermille, usedPermille(balance));
  if (crossed.length === 0) return;
  const highest = Math.max(...crossed);
  await tx.update(allocations).set({ noticedPermille: highest }).where(eq(allocations.id, row.id));
  const [project] = await tx.select({ title: projects.title }).from(projects).where(eq(projects.id, row.projectId));
  await notifyMembers(
    tx,
    row.orgId,
    await budgetKeepers(tx, row),
    highest >= 1000 ? 'notice.budgetExhausted' : 'notice.budget80',
    { project: project?.title ?? '' },
    `/allocations/${row.id}`,
    // noticedPermille (only ever raised) makes the notice once per threshold; the key makes its mail once whatever happens.
    { dedupeKey: `budget:${row.id}:${highest}` },
  );
}

/**
 * Tells the tenant's owners once a month that its monthly cap is reached (core monthlyCapReached). The
 * organisation row is locked NO KEY UPDATE by every credit-line reservation (lock order, step 1), so
 * marking the month on it is safe and two reservations cannot both report it.
 */
async function noticeMonthlyCap(tx: Tx, org: LockedOrganisation, spent: number | null, input: Pick<ReserveInput, 'today' | 'amount'>): Promise<void> {
  if (spent === null || org.monthlyCapCents === null) return;
  const month = capMonth(input.today);
  if (org.capReachedNoticedMonth === month) return;
  if (!monthlyCapReached({ capCents: org.monthlyCapCents, spentBeforeCents: spent, amountCents: input.amount })) return;
  await tx.update(organisations).set({ capReachedNoticedMonth: month }).where(eq(organisations.id, org.id));
  org.capReachedNoticedMonth = month;
  const owners = await tx.select({ userId: memberships.userId }).from(memberships).where(and(eq(memberships.orgId, org.id), eq(memberships.role, 'owner')));
  await notifyMembers(
    tx,
    org.id,
    owners.map((o) => o.userId),
    'notice.monthlyCapReached',
    { org: org.name, cap: org.monthlyCapCents / 100, month: month.slice(0, 7) },
    '/organisation',
    { dedupeKey: `monthly-cap:${org.id}:${month.slice(0, 7)}` },
  );
}

/** assertUsable refuses reservations on allocations that are not active or outside their period. */
function assertUsable(row: AllocationRow, today: string): void {
  if (row.status !== 'active') throw new AppError('PRECONDITION_FAILED', 'ledger.allocationNotActive', { status: row.status });
  if (today < row.periodStart || today >= row.periodEnd) {
    throw new AppError('PRECONDITION_FAILED', 'ledger.outsidePeriod', { start: row.periodStart, end: row.periodEnd });
  }
}

/** monthSpendCents sums a tenant's charged and reserved cents in the calendar month of `today`. */
export async function monthSpendCents(tx: DbOrTx, orgId: string, today: string): Promise<number> {
  const monthStart = `${today.slice(0, 7)}-01`;
  // Both statements are started now, in this order (see startNewJobReservation).
  const [[row], [reserved]] = await Promise.all([
    tx
      .select({
        spent: sql<string>`coalesce(sum(case when ${ledgerEntries.kind} = 'charge' and ${ledgerEntries.at} >= ${monthStart}::date then ${ledgerEntries.amount}
                                          when ${ledgerEntries.kind} = 'refund' and ${ledgerEntries.at} >= ${monthStart}::date then -${ledgerEntries.amount}
                                          else 0 end), 0)`,
      })
      .from(ledgerEntries)
      .innerJoin(allocations, eq(allocations.id, ledgerEntries.allocationId))
      // Only this month's entries: the index on (allocation, at) reads them, not the tenant's whole history.
      .where(and(eq(allocations.orgId, orgId), eq(allocations.unit, 'cents'), gte(ledgerEntries.at, sql`${monthStart}::date`)))
      .execute(),
    tx
      .select({ n: sql<string>`coalesce(sum(${allocations.reserved}), 0)` })
      .from(allocations)
      .where(and(eq(allocations.orgId, orgId), eq(allocations.unit, 'cents')))
      .execute(),
  ]);
  return Number(row?.spent ?? 0) + Number(reserved?.n ?? 0);
}

export interface ReserveInput {
  allocationId: string;
  /** The tenant acting: the allocation must belong to it. */
  orgId: string;
  jobId: string;
  amount: number;
  actorUserId: string | null;
  /** Today as YYYY-MM-DD, for the period and the monthly cap. */
  today: string;
  /** When the reservation happened (default now); the demo seed writes history. */
  at?: Date;
  /** The job was created in this transaction, so it cannot have reserved before (saves a lookup). */
  newJob?: boolean;
  /** A session's n-th extension of its time limit (n ≥ 1) reserves the added time; absent: the job's own reservation. */
  extension?: number;
}

/**
 * reserveBudget holds budget for a job, inside the caller's transaction (the one that creates the job).
 * A job reserves at most once: a retry with the same job id returns the first reservation.
 */
export async function reserveBudget(tx: Tx, input: ReserveInput): Promise<{ reserved: number; available: number }> {
  const [target] = await tx.select({ unit: allocations.unit }).from(allocations).where(eq(allocations.id, input.allocationId));
  if (!target) throw new AppError('NOT_FOUND', 'error.notFound');
  // Lock order: organisation, then allocation — the monthly cap spans the tenant's allocations.
  const org = await lockOrganisation(tx, input.orgId, target.unit);
  const row = await lockAllocation(tx, input.allocationId);
  return reserveOnLocked(tx, org, row, input);
}

/** reserveOnLocked holds budget for a job on an organisation and allocation this transaction has locked (see reserveBudget). */
export async function reserveOnLocked(tx: Tx, org: LockedOrganisation, row: AllocationRow, input: ReserveInput): Promise<{ reserved: number; available: number }> {
  checkReserver(org, row, input);
  const [existing] = input.newJob
    ? []
    : await tx
        .select({ amount: ledgerEntries.amount })
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.jobId, input.jobId), eq(ledgerEntries.kind, 'reserve'), eq(ledgerEntries.extension, input.extension ?? 0)));
  if (existing) return { reserved: existing.amount, available: available(balanceOfRow(row)) };
  const spent = row.unit === 'cents' && org.monthlyCapCents !== null ? await monthSpendCents(tx, org.id, input.today) : null;
  checkReservation(org, row, input, spent);
  const balance = await appendEntries(tx, row, [{ kind: 'reserve', amount: input.amount, jobId: input.jobId, extension: input.extension, actorUserId: input.actorUserId, at: input.at }]);
  await noticeMonthlyCap(tx, org, spent, input);
  return { reserved: input.amount, available: available(balance) };
}

/** The amount is a positive integer and the tenant acting owns the allocation and may act. */
function checkReserver(org: LockedOrganisation, row: AllocationRow, input: Pick<ReserveInput, 'amount' | 'orgId'>): void {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw new AppError('BAD_REQUEST', 'ledger.invalidAmount', {}, 'amount');
  if (row.orgId !== input.orgId || org.id !== input.orgId) throw new AppError('NOT_FOUND', 'error.notFound');
  if (org.status !== 'active') {
    throw new AppError('FORBIDDEN', org.status === 'suspended' ? 'error.tenantSuspended' : 'error.tenantNotActive', { org: org.name });
  }
}

/**
 * checkReservation applies the reservation rules to the locked rows: the allocation usable today, the
 * tenant's monthly cap (credit lines; `spent` = this month's spend before this reservation, null when
 * there is no cap) and the balance (core applyEntry). Throws the refusal; returns the balance after.
 */
function checkReservation(org: LockedOrganisation, row: AllocationRow, input: Pick<ReserveInput, 'amount' | 'today'>, spent: number | null, balance: Balance = balanceOfRow(row)): Balance {
  assertUsable(row, input.today);
  if (row.unit === 'cents' && org.monthlyCapCents !== null && spent !== null && spent + input.amount > org.monthlyCapCents) {
    throw new AppError('PRECONDITION_FAILED', 'ledger.monthlyCap', {
      needed: input.amount / 100,
      remaining: Math.max(0, org.monthlyCapCents - spent) / 100,
      cap: org.monthlyCapCents / 100,
    });
  }
  const result = applyEntry(balance, { kind: 'reserve', amount: input.amount });
  if (!result.ok) throw refusalError(row, result.refusal);
  return result.balance;
}

/**
 * decideBatchedReservation decides one reservation of a batch (model calls reserved together:
 * services/inference/metering.ts) on an organisation and allocation this transaction has locked: the
 * rules of a single reservation, on the balance and the month's spend after those accepted before it
 * in the batch. Throws the refusal (AppError); returns the balance after. appendBatchedReservations
 * writes the accepted ones.
 */
export function decideBatchedReservation(org: LockedOrganisation, row: AllocationRow, balance: Balance, input: Pick<ReserveInput, 'amount' | 'orgId' | 'today'>, spent: number | null): Balance {
  checkReserver(org, row, input);
  return checkReservation(org, row, input, spent, balance);
}

/**
 * appendBatchedReservations writes the model calls' reservations a batch accepted (decideBatchedReservation),
 * one ledger row each and the allocation's balance once, in one statement; `spent` is the month's spend
 * before the batch (null: no cap), for the cap's notice.
 */
export async function appendBatchedReservations(
  tx: Tx,
  org: LockedOrganisation,
  row: AllocationRow,
  calls: { modelCallId: string; amount: number; actorUserId: string; at: Date }[],
  input: { today: string; spent: number | null },
): Promise<void> {
  if (calls.length === 0) return;
  await appendEntries(
    tx,
    row,
    calls.map((c) => ({ kind: 'reserve' as const, amount: c.amount, modelCallId: c.modelCallId, actorUserId: c.actorUserId, at: c.at })),
  );
  const amount = calls.reduce((sum, c) => sum + c.amount, 0);
  await noticeMonthlyCap(tx, org, row.unit === 'cents' ? input.spent : null, { today: input.today, amount });
}

/**
 * settleModelCallsOnLocked releases model calls' reservations and charges what each cost (whole units, the
 * caller's chargeWithCarry), with the overrun rule of a job, on their allocation locked by this
 * transaction, in one append; the caller makes each once (the call's row, `open` → `settled`, under the
 * same lock). On an allocation that expired meanwhile the unused reservation is written off, as a job's.
 */
export async function settleModelCallsOnLocked(tx: Tx, row: AllocationRow, calls: { modelCallId: string; reserved: number; charge: number; at?: Date }[]): Promise<void> {
  const entries: EntryInput[] = [];
  for (const call of calls) {
    const s = settleAmounts(call.reserved, call.charge);
    if (call.reserved > 0) entries.push({ kind: 'release', amount: s.release, modelCallId: call.modelCallId, at: call.at });
    if (s.charge > 0) entries.push({ kind: 'charge', amount: s.charge, overrun: s.overrun, modelCallId: call.modelCallId, at: call.at });
    if (row.status === 'expired' && s.unused > 0) entries.push({ kind: 'expire', amount: s.unused, reason: `allocation period ended on ${row.periodEnd}`, at: call.at });
  }
  if (entries.length) await appendEntries(tx, row, entries);
}

/** A new job's reservation whose writes are on their way (startNewJobReservation). */
export interface PendingReservation {
  /** This month's spend before the reservation, when the tenant had a monthly cap on its credit lines. */
  monthSpent: Promise<number | null>;
  /** The allocation's balance after the append, or the database's refusal (its balance check). */
  appended: Promise<{ ok: true; balance: Balance } | { ok: false; error: unknown }>;
}

/**
 * startNewJobReservation sends a new job's reservation without waiting for a decision: the ledger row
 * and `reserved + amount` on the allocation, in one statement. Started right after lockOrganisation,
 * lockAllocation and the job's insert, it saves the round trip for which deciding first and writing
 * after would hold the allocation's lock: the busiest allocation serves more submissions. The caller must
 * then call confirmReservation with the locked rows; its refusal rolls these writes back with the
 * transaction. `capped`: the tenant had a monthly cap when last read (its spend is read first, so
 * it does not include this reservation).
 *
 * Statement order: `.execute()` hands a statement to the driver at once, so statements started that
 * way one after another are sent in that order and Postgres runs them in that order (pipelined: one
 * round trip); `await` or Promise.all on an unexecuted query would start it a microtask later and
 * let a later `.execute()` overtake it. The locks and this reservation are all started so.
 */
export function startNewJobReservation(tx: Tx, input: ReserveInput, unit: AllocationRow['unit'], capped: boolean): PendingReservation {
  return startReservation(tx, { ...input, jobId: input.jobId, modelCallId: null }, unit, capped);
}

/**
 * startModelCallReservation sends a model call's reservation (issue #29) the way startNewJobReservation sends a
 * new job's: pipelined behind the locks, decided by confirmReservation on the rows as locked.
 */
export function startModelCallReservation(tx: Tx, input: { allocationId: string; orgId: string; modelCallId: string; amount: number; actorUserId: string; today: string; at: Date }, unit: AllocationRow['unit'], capped: boolean): PendingReservation {
  return startReservation(tx, { ...input, jobId: null }, unit, capped);
}

/** startReservation sends the month's spend (a capped credit line) and the reservation of a new job or a model call. */
function startReservation(
  tx: Tx,
  input: { allocationId: string; orgId: string; amount: number; actorUserId: string | null; today: string; at?: Date; jobId: string | null; modelCallId: string | null },
  unit: AllocationRow['unit'],
  capped: boolean,
): PendingReservation {
  const monthSpent = unit === 'cents' && capped ? monthSpendCents(tx, input.orgId, input.today) : Promise.resolve(null);
  const appended = reserveStatement(tx, { allocationId: input.allocationId, amount: input.amount, jobId: input.jobId, modelCallId: input.modelCallId, actorUserId: input.actorUserId, at: input.at?.toISOString() ?? null }).then(
    ([after]) => (after ? { ok: true as const, balance: after } : { ok: false as const, error: new AppError('NOT_FOUND', 'error.notFound') }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  return { monthSpent, appended };
}

/**
 * A reservation's ledger row (a new job's or a model call's), in one statement that answers the allocation's
 * balance after it (at: null = the transaction's time): the trigger ledger_applied (drizzle/0064) moves the
 * cached balance within the insert, after the statement's snapshot was taken, so the answer adds the
 * amount to the balance as this statement sees it (the row is locked by this transaction).
 */
const reserveStatement = reusable('ledger_reserve', (tx) => {
  const appended = tx.$with('appended').as(
    tx
      .insert(ledgerEntries)
      .values({
        allocationId: sql.placeholder('allocationId'),
        kind: 'reserve',
        amount: sql.placeholder('amount'),
        jobId: sql.placeholder('jobId'),
        modelCallId: sql.placeholder('modelCallId'),
        actorUserId: sql.placeholder('actorUserId'),
        at: sql`coalesce(${sql.placeholder('at')}::timestamptz, now())`,
      })
      .returning({ amount: ledgerEntries.amount }),
  );
  return tx
    .with(appended)
    .select({
      granted: allocations.granted,
      charged: allocations.charged,
      reserved: sql<number>`${allocations.reserved} + (select ${appended.amount} from ${appended})`.mapWith(Number),
      expired: allocations.expired,
      overrun: allocations.overrun,
    })
    .from(allocations)
    .where(eq(allocations.id, sql.placeholder('allocationId')));
});

/**
 * confirmReservation decides a reservation started by startNewJobReservation, with the same rules as
 * reserveOnLocked, on the organisation and allocation rows as they were locked (before the append).
 */
export async function confirmReservation(tx: Tx, org: LockedOrganisation, row: AllocationRow, input: Pick<ReserveInput, 'amount' | 'orgId' | 'today'>, pending: PendingReservation): Promise<{ reserved: number; available: number }> {
  checkReserver(org, row, input);
  const appended = await pending.appended;
  let spent = await pending.monthSpent;
  if (spent === null && row.unit === 'cents' && org.monthlyCapCents !== null && appended.ok) {
    // The cap was set after the tenant was read: its spend now includes this reservation.
    spent = (await monthSpendCents(tx, org.id, input.today)) - input.amount;
  }
  const expected = checkReservation(org, row, input, spent);
  if (!appended.ok) throw appended.error;
  const after = appended.balance;
  if (after.granted !== expected.granted || after.charged !== expected.charged || after.reserved !== expected.reserved || after.expired !== expected.expired || after.overrun !== expected.overrun) {
    throw new Error(`ledger: allocation ${row.id} holds ${JSON.stringify(after)} after a reservation, the rules give ${JSON.stringify(expected)}`);
  }
  await noticeUsage(tx, row, after);
  await noticeMonthlyCap(tx, org, row.unit === 'cents' ? spent : null, input);
  return { reserved: input.amount, available: available(after) };
}

/**
 * jobReservation is what a job holds: its allocation, its reservation with any extensions (less those
 * taken back), and whether it was settled (its own release, extension 0, written). Array tasks' shares are
 * left out (settledTasks). Undefined: the job never reserved.
 */
async function jobReservation(tx: Tx, jobId: string): Promise<{ allocationId: string; amount: number; released: boolean } | undefined> {
  const [row] = await tx
    .select({
      allocationId: ledgerEntries.allocationId,
      amount: sql<string>`coalesce(sum(${ledgerEntries.amount}) filter (where ${ledgerEntries.kind} = 'reserve'), 0) - coalesce(sum(${ledgerEntries.amount}) filter (where ${ledgerEntries.kind} = 'release' and ${ledgerEntries.extension} > 0), 0)`,
      released: sql<boolean>`coalesce(bool_or(${ledgerEntries.kind} = 'release' and ${ledgerEntries.extension} = 0), false)`,
      reserves: sql<number>`count(*) filter (where ${ledgerEntries.kind} = 'reserve')`.mapWith(Number),
    })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.jobId, jobId), isNull(ledgerEntries.taskIndex), inArray(ledgerEntries.kind, ['reserve', 'release'])))
    .groupBy(ledgerEntries.allocationId);
  if (!row || row.reserves === 0) return undefined;
  return { allocationId: row.allocationId, amount: Number(row.amount), released: row.released };
}

/** What a job array's tasks settled so far: released of its reservation and charged (both 0 for one job). */
async function settledTasks(tx: Tx, jobId: string): Promise<{ released: number; charged: number }> {
  const [row] = await tx
    .select({
      released: sql<string>`coalesce(sum(${ledgerEntries.amount}) filter (where ${ledgerEntries.kind} = 'release'), 0)`,
      charged: sql<string>`coalesce(sum(${ledgerEntries.amount}) filter (where ${ledgerEntries.kind} = 'charge'), 0)`,
    })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.jobId, jobId), isNotNull(ledgerEntries.taskIndex)));
  return { released: Number(row?.released ?? 0), charged: Number(row?.charged ?? 0) };
}

export interface SettleResult {
  settled: boolean;
  charged: number;
  released: number;
  overrun: number;
}

/**
 * settleJobInTx charges a finished job's actual usage and releases its reservation — exactly once:
 * settling again (or after a cancel-before-start release) changes nothing and returns settled=false.
 * Overrun rule (core settleAmounts): usage beyond the reservation is charged and flagged. On an
 * allocation that has already expired, the unused part of the reservation is written off too.
 */
export async function settleJobInTx(tx: Tx, input: { jobId: string; actualAmount: number; at?: Date; array?: boolean }): Promise<SettleResult> {
  if (!Number.isSafeInteger(input.actualAmount) || input.actualAmount < 0) throw new AppError('BAD_REQUEST', 'ledger.invalidAmount', {}, 'actualAmount');
  const reservation = await jobReservation(tx, input.jobId);
  if (!reservation) throw new AppError('NOT_FOUND', 'error.notFound');
  const row = await lockAllocation(tx, reservation.allocationId);
  // Re-read under the lock: a concurrent settle may have finished while we waited.
  const current = await jobReservation(tx, input.jobId);
  if (current?.released) return { settled: false, charged: 0, released: 0, overrun: 0 };
  // A job array's tasks were settled one by one as they ended: the job settles the rest (the reservation
  // of tasks that never ran, and any usage not yet charged).
  const tasks = input.array ? await settledTasks(tx, input.jobId) : { released: 0, charged: 0 };
  const s = settleAmounts(reservation.amount - tasks.released, Math.max(0, input.actualAmount - tasks.charged));
  // (An array whose tasks released all of it has nothing left to release: its settled row is the guard then.)
  const entries: EntryInput[] = s.release > 0 || !input.array ? [{ kind: 'release', amount: s.release, jobId: input.jobId, at: input.at }] : [];
  if (s.charge > 0) entries.push({ kind: 'charge', amount: s.charge, overrun: s.overrun, jobId: input.jobId, at: input.at });
  if (row.status === 'expired' && s.unused > 0) entries.push({ kind: 'expire', amount: s.unused, reason: `allocation period ended on ${row.periodEnd}`, at: input.at });
  if (entries.length) await appendEntries(tx, row, entries);
  return { settled: true, charged: s.charge, released: s.unused, overrun: s.overrun };
}

/**
 * settleTaskInTx settles one ended task of a job array, once: its usage is charged and its share of the
 * array's reservation (`share`: the reservation ÷ the tasks) released, with the overrun rule of a job.
 * The caller has locked the allocation (the lock order) and makes the task's row settled in the same
 * transaction; a second call for the task writes nothing and returns settled=false.
 */
export async function settleTaskInTx(tx: Tx, input: { allocationId: string; jobId: string; taskIndex: number; share: number; actualAmount: number; at?: Date }): Promise<SettleResult> {
  const row = await lockAllocation(tx, input.allocationId);
  const done = await tx
    .select({ kind: ledgerEntries.kind, taskIndex: ledgerEntries.taskIndex })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.jobId, input.jobId), inArray(ledgerEntries.kind, ['release', 'charge']), or(eq(ledgerEntries.taskIndex, input.taskIndex), isNull(ledgerEntries.taskIndex))));
  if (done.some((e) => e.taskIndex === input.taskIndex)) return { settled: false, charged: 0, released: 0, overrun: 0 };
  if (done.some((e) => e.kind === 'release')) {
    // The array's reservation was released already (it was to be cancelled, at its allocation's end) and
    // this task ran before the cancel arrived: what it used is charged all the same, as an overrun.
    if (input.actualAmount > 0) await appendEntries(tx, row, [{ kind: 'charge', amount: input.actualAmount, overrun: input.actualAmount, jobId: input.jobId, taskIndex: input.taskIndex, at: input.at }]);
    return { settled: true, charged: input.actualAmount, released: 0, overrun: input.actualAmount };
  }
  const s = settleAmounts(input.share, input.actualAmount);
  const entries: EntryInput[] = s.release > 0 ? [{ kind: 'release', amount: s.release, jobId: input.jobId, taskIndex: input.taskIndex, at: input.at }] : [];
  if (s.charge > 0) entries.push({ kind: 'charge', amount: s.charge, overrun: s.overrun, jobId: input.jobId, taskIndex: input.taskIndex, at: input.at });
  if (row.status === 'expired' && s.unused > 0) entries.push({ kind: 'expire', amount: s.unused, reason: `allocation period ended on ${row.periodEnd}`, at: input.at });
  if (entries.length) await appendEntries(tx, row, entries);
  return { settled: true, charged: s.charge, released: s.unused, overrun: s.overrun };
}

/**
 * chargeReleasedJobInTx charges usage of a job whose reservation was already released (it was to be
 * cancelled, e.g. at allocation expiry, but started before the cancellation reached the scheduler).
 * The usage happened, so it is charged — as an overrun, since nothing was reserved for it.
 */
export async function chargeReleasedJobInTx(tx: Tx, input: { jobId: string; amount: number; at?: Date; array?: boolean }): Promise<void> {
  if (input.amount <= 0) return;
  const reservation = await jobReservation(tx, input.jobId);
  if (!reservation) throw new AppError('NOT_FOUND', 'error.notFound');
  const row = await lockAllocation(tx, reservation.allocationId);
  const [charged] = await tx
    .select({ id: ledgerEntries.id })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.jobId, input.jobId), eq(ledgerEntries.kind, 'charge'), isNull(ledgerEntries.taskIndex)));
  if (charged) return;
  // A job array's tasks were charged as they ended: only what they did not cover.
  const amount = input.array ? input.amount - (await settledTasks(tx, input.jobId)).charged : input.amount;
  if (amount <= 0) return;
  await appendEntries(tx, row, [{ kind: 'charge', amount, overrun: amount, jobId: input.jobId, at: input.at }]);
}

/**
 * chargeOutsideUsageInTx charges usage that ran around the portal (a job submitted to the scheduler from
 * a shell in the project's account): nothing was reserved for it, so all of it is overrun. The caller
 * makes it happen once (server/services/cluster/outside-usage.ts).
 */
export async function chargeOutsideUsageInTx(tx: Tx, input: { allocationId: string; amount: number; reason: string; at?: Date }): Promise<void> {
  if (input.amount <= 0) return;
  const row = await lockAllocation(tx, input.allocationId);
  await appendEntries(tx, row, [{ kind: 'charge', amount: input.amount, overrun: input.amount, reason: input.reason, at: input.at }]);
}

/** settleJob settles a job in its own transaction (see settleJobInTx). */
export async function settleJob(db: Db, input: { jobId: string; actualAmount: number; at?: Date }): Promise<SettleResult> {
  return inTransaction(db, (tx) => settleJobInTx(tx, input));
}

/** releaseJobReservationInTx returns a job's whole reservation (cancelled before it started); a second call changes nothing. */
export async function releaseJobReservationInTx(tx: Tx, input: { jobId: string; reason: string }): Promise<{ released: number }> {
  const reservation = await jobReservation(tx, input.jobId);
  if (!reservation) throw new AppError('NOT_FOUND', 'error.notFound');
  const row = await lockAllocation(tx, reservation.allocationId);
  const current = await jobReservation(tx, input.jobId);
  if (current?.released) return { released: 0 };
  // A job array may have settled tasks already: what is left of its reservation.
  const amount = reservation.amount - (await settledTasks(tx, input.jobId)).released;
  await appendEntries(tx, row, [{ kind: 'release', amount, jobId: input.jobId, reason: input.reason }]);
  return { released: amount };
}

/**
 * releaseExtensionInTx takes back a session's n-th extension that the scheduler did not apply: its reserve
 * is released (the release of that extension), once; a second call, or one for an extension never
 * reserved or settled with its job already, changes nothing.
 */
export async function releaseExtensionInTx(tx: Tx, input: { jobId: string; extension: number; reason: string }): Promise<{ released: number }> {
  if (!Number.isSafeInteger(input.extension) || input.extension < 1) throw new AppError('BAD_REQUEST', 'ledger.invalidAmount', {}, 'extension');
  const reservation = await jobReservation(tx, input.jobId);
  if (!reservation) return { released: 0 };
  const row = await lockAllocation(tx, reservation.allocationId);
  const entries = await tx
    .select({ kind: ledgerEntries.kind, amount: ledgerEntries.amount, extension: ledgerEntries.extension })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.jobId, input.jobId), isNull(ledgerEntries.taskIndex), eq(ledgerEntries.kind, 'release')));
  const reserve = await tx
    .select({ amount: ledgerEntries.amount })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.jobId, input.jobId), eq(ledgerEntries.kind, 'reserve'), eq(ledgerEntries.extension, input.extension)));
  // Settled with its job (whose release covered every extension), or taken back already: nothing left.
  if (!reserve[0] || entries.some((e) => e.extension === 0 || e.extension === input.extension)) return { released: 0 };
  await appendEntries(tx, row, [{ kind: 'release', amount: reserve[0].amount, jobId: input.jobId, extension: input.extension, reason: input.reason }]);
  return { released: reserve[0].amount };
}

/** releaseJobReservation releases a job's reservation in its own transaction (see releaseJobReservationInTx). */
export async function releaseJobReservation(db: Db, input: { jobId: string; reason: string }): Promise<{ released: number }> {
  return inTransaction(db, (tx) => releaseJobReservationInTx(tx, input));
}

/** grantBudget adds a grant to an allocation (inside the caller's transaction). */
export async function grantBudget(tx: Tx, input: { allocationId: string; amount: number; actorUserId: string | null; reason: string }): Promise<Balance> {
  const row = await lockAllocation(tx, input.allocationId);
  return appendEntries(tx, row, [{ kind: 'grant', amount: input.amount, actorUserId: input.actorUserId, reason: input.reason }]);
}

/**
 * adjustAllocation lets staff raise or lower a budget (never below what is used), audited with a reason;
 * then the scheduler's budget of the project follows (`budgets`, after the commit). A credit line's
 * adjustment is one decision with the tenant's monthly cap (`capCents`; absent: left as it is), audited
 * in the same row, and the company is told the line and the cap; a GPU-hour budget has no cap to set.
 */
export async function adjustAllocation(db: Db, staff: Actor, input: { allocationId: string; amount: number; reason: string; capCents?: CapChoice }, budgets?: BudgetSyncStep): Promise<Balance> {
  checkCapChoice(input.capCents);
  let projectId = '';
  const adjusted = await inTransaction(db, async (tx) => {
    const [target] = await tx.select({ unit: allocations.unit, orgId: allocations.orgId }).from(allocations).where(eq(allocations.id, input.allocationId));
    if (!target) throw new AppError('NOT_FOUND', 'error.notFound');
    if (target.unit !== 'cents' && input.capCents !== undefined) throw new AppError('BAD_REQUEST', 'allocation.capCreditLinesOnly', {}, 'capEuros');
    // Lock order: the organisation (a credit line's cap may change), then the allocation.
    const org = target.unit === 'cents' ? await lockOrganisation(tx, target.orgId, 'cents') : null;
    const row = await lockAllocation(tx, input.allocationId);
    projectId = row.projectId;
    const balance = await appendEntries(tx, row, [{ kind: 'adjust', amount: input.amount, actorUserId: staff.userId, reason: input.reason }], 'amount');
    const cap = org ? await setCapWithLine(tx, org, input.capCents) : null;
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: row.orgId,
      action: 'allocation.adjusted',
      targetType: 'allocation',
      targetId: row.id,
      reason: input.reason,
      data: { amount: input.amount, unit: row.unit, grantedBefore: row.granted, grantedAfter: balance.granted, ...(cap ? { ...lineChange(row.granted, balance.granted), ...cap.audit } : {}) },
      isStaffAction: true,
    });
    if (cap) {
      const [project] = await tx.select({ title: projects.title }).from(projects).where(eq(projects.id, row.projectId));
      await tellLineAndCap(tx, { id: row.id, orgId: row.orgId, projectId: row.projectId, projectTitle: project?.title ?? '', grantedCents: balance.granted }, cap.capCents, 'adjusted');
    }
    return balance;
  });
  await syncBudgetsAfterCommit(db, budgets, [projectId]);
  return adjusted;
}

/** refundCharge lets staff give back charged budget (e.g. after a node failure), audited with a reason. */
export async function refundCharge(db: Db, staff: Actor, input: { allocationId: string; amount: number; reason: string }): Promise<Balance> {
  return inTransaction(db, async (tx) => {
    const row = await lockAllocation(tx, input.allocationId);
    const balance = await appendEntries(tx, row, [{ kind: 'refund', amount: input.amount, actorUserId: staff.userId, reason: input.reason }], 'amount');
    await recordAudit(tx, {
      actorUserId: staff.userId,
      orgId: row.orgId,
      action: 'allocation.refunded',
      targetType: 'allocation',
      targetId: row.id,
      reason: input.reason,
      data: { amount: input.amount, unit: row.unit },
      isStaffAction: true,
    });
    return balance;
  });
}

/**
 * openReservations lists the jobs holding a reservation on an allocation that was never released (what is
 * left of it: an array's settled tasks and a session's extensions taken back are not), with the job's state
 * if it has a job record.
 */
export async function openReservations(db: DbOrTx, allocationId: string) {
  const e = ledgerEntries;
  const held = sql<number>`(coalesce(sum(${e.amount}) filter (where ${e.kind} = 'reserve'), 0) - coalesce(sum(${e.amount}) filter (where ${e.kind} = 'release' and (${e.taskIndex} is not null or ${e.extension} > 0)), 0))::bigint`;
  return db
    .select({ jobId: e.jobId, amount: held.mapWith(Number), jobState: jobs.state })
    .from(e)
    .leftJoin(jobs, eq(jobs.id, e.jobId))
    .where(and(eq(e.allocationId, allocationId), isNotNull(e.jobId), inArray(e.kind, ['reserve', 'release'])))
    .groupBy(e.jobId, jobs.state)
    .having(and(sql`not coalesce(bool_or(${e.kind} = 'release' and ${e.taskIndex} is null and ${e.extension} = 0), false)`, sql`${held} > 0`));
}

/**
 * expireDueAllocations ends every active allocation whose period is over: jobs still queued against
 * it are marked for cancellation (the reconciler stops them at the scheduler) and their reservations
 * released with the reason; running jobs keep theirs and are charged when they end; the rest of the
 * budget is written off as expired, and the people concerned are told; then the scheduler's budgets of
 * their projects are lowered to what they used (`budgets`). Returns the allocations expired.
 */
export async function expireDueAllocations(db: Db, today: string, budgets?: BudgetSyncStep): Promise<string[]> {
  const due = await db.select({ id: allocations.id }).from(allocations).where(and(eq(allocations.status, 'active'), lte(allocations.periodEnd, today)));
  const expired: string[] = [];
  for (const { id } of due) {
    await inTransaction(db, async (tx) => {
      const row = await lockAllocation(tx, id);
      if (row.status !== 'active' || row.periodEnd > today) return;
      const reason = `allocation period ended on ${row.periodEnd}`;
      const queued = (await openReservations(tx, id)).filter((r) => r.jobState !== 'RUNNING');
      const entries: EntryInput[] = queued.map((r) => ({ kind: 'release', amount: r.amount, jobId: r.jobId, reason }));
      const queuedJobIds = queued.map((r) => r.jobId).filter((j): j is string => j !== null);
      if (queuedJobIds.length) {
        // Job rows in id order, after the allocation: the order every transaction takes them in.
        await tx.select({ id: jobs.id }).from(jobs).where(inArray(jobs.id, queuedJobIds)).orderBy(jobs.id).for('no key update');
        const marked = await tx
          .update(jobs)
          .set({ cancelRequestedAt: new Date(), pendingReason: 'AllocationExpired' })
          .where(and(inArray(jobs.id, queuedJobIds), isNull(jobs.settledAt)))
          .returning({ id: jobs.id, state: jobs.state });
        if (marked.length) await tx.insert(jobEvents).values(marked.map((j) => ({ jobId: j.id, state: j.state, message: 'job.event.allocationExpired', data: { end: row.periodEnd } })));
      }
      const after = entries.reduce((b, e) => {
        const r = applyEntry(b, e);
        return r.ok ? r.balance : b;
      }, balanceOfRow(row));
      const rest = available(after);
      if (rest > 0) entries.push({ kind: 'expire', amount: rest, reason });
      if (entries.length) await appendEntries(tx, row, entries);
      await tx.update(allocations).set({ status: 'expired', statusReason: reason }).where(eq(allocations.id, id));
      await recordAudit(tx, { actorUserId: null, orgId: row.orgId, action: 'allocation.expired', targetType: 'allocation', targetId: id, reason, data: { expired: rest, releasedJobs: entries.length - (rest > 0 ? 1 : 0) } });
      const [project] = await tx.select({ title: projects.title }).from(projects).where(eq(projects.id, row.projectId));
      const leads = await tx.select({ userId: projectMembers.userId }).from(projectMembers).where(and(eq(projectMembers.projectId, row.projectId), inArray(projectMembers.role, ['pi', 'manager'])));
      await notifyMembers(tx, row.orgId, leads.map((l) => l.userId), 'notice.allocationExpired', { project: project?.title ?? '', end: row.periodEnd }, `/allocations/${id}`);
      expired.push(id);
    });
  }
  if (budgets && expired.length) await syncBudgetsAfterCommit(db, budgets, await projectIdsOfAllocations(db, expired));
  return expired;
}

/** ledgerSums recomputes an allocation's balance from its rows, to check the cached one. */
export async function ledgerSums(db: DbOrTx, allocationId: string): Promise<Balance> {
  const rows = await db
    .select({ kind: ledgerEntries.kind, amount: sql<string>`sum(${ledgerEntries.amount})`, overrun: sql<string>`sum(${ledgerEntries.overrun})` })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.allocationId, allocationId))
    .groupBy(ledgerEntries.kind);
  const sum = (kind: LedgerKind) => Number(rows.find((r) => r.kind === kind)?.amount ?? 0);
  return {
    granted: sum('grant') + sum('adjust'),
    charged: sum('charge') - sum('refund'),
    reserved: sum('reserve') - sum('release'),
    expired: sum('expire'),
    overrun: Number(rows.find((r) => r.kind === 'charge')?.overrun ?? 0),
  };
}

/** dailyUsage sums an allocation's charges (minus refunds) per UTC day since a date. */
export async function dailyUsage(db: DbOrTx, allocationId: string, since: string) {
  const day = sql<string>`to_char(${ledgerEntries.at} at time zone 'UTC', 'YYYY-MM-DD')`;
  const rows = await db
    .select({ day, amount: sql<string>`sum(case when ${ledgerEntries.kind} = 'refund' then -${ledgerEntries.amount} else ${ledgerEntries.amount} end)` })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.allocationId, allocationId), inArray(ledgerEntries.kind, ['charge', 'refund']), gte(ledgerEntries.at, new Date(`${since}T00:00:00Z`))))
    .groupBy(day)
    .orderBy(day);
  return rows.map((r) => ({ day: r.day, amount: Number(r.amount) }));
}
