// What-if planning for staff: a period of the centre's own history (its jobs in the database) replayed
// on the current machine and on a proposed one, in the worker, with progress and stored results.
// The machine is the simulated cluster's (cluster-config.ts: one partition per active class) with
// the sites' power figures from the database and the caps from the catalogue; the replay and its
// measures are pure (server/core/whatif).
import { and, asc, desc, eq, gte, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { jobs, resourceClasses, sites, users, whatIfRuns } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { configuredCatalogue, localName, sitePowerCapW, type Catalogue } from '~/server/catalogue';
import { meanGpuUtilPercent } from '~/server/core/jobs/efficiency';
import { applyChanges, changeProblems, type WhatIfChange, type WhatIfJob, type WhatIfMachine } from '~/server/core/whatif/machine';
import { nearestRank, WhatIfReplay, type WhatIfOutcome } from '~/server/core/whatif/replay';
import { addDays } from '~/server/core/working-days';
import { AppError } from '~/server/errors';
import type { Locale } from '~/server/i18n';
import type { Actor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { inTransaction } from '~/server/services/transaction';

/** The longest history one run replays. */
export const WHAT_IF_MAX_DAYS = 366;
/** How long a worker holds a run between progress notes; a run whose lease ran out is taken again. */
const LEASE_MS = 60_000;
/** A run that failed this many times in a row (the worker died in it) is given up. */
const MAX_ATTEMPTS = 3;
/** The live cluster's scheduling policy (server/adapters/scheduler/simulated.ts) and queue depth. */
const CURRENT_POLICY = 'multifactor' as const;
const QUEUE_DEPTH = 100;

/** What a finished run stores. */
export interface WhatIfResult {
  /** Jobs submitted in the period, those replayed, and those left out (never started, run time unknown). */
  history: { submitted: number; replayed: number; neverStarted: number; unknownRuntime: number; recordedWaitP50Seconds: number; recordedWaitP90Seconds: number };
  current: WhatIfOutcome;
  proposed: WhatIfOutcome;
  /** Time the two replays took, in ms. */
  elapsedMs: number;
}

export interface WhatIfRunSummary {
  id: string;
  title: string;
  createdAt: Date;
  createdByName: string;
  fromDay: string;
  toDay: string;
  changes: WhatIfChange[];
  status: 'queued' | 'running' | 'done' | 'failed';
  progressPermille: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  error: string | null;
}

export interface WhatIfRunView extends WhatIfRunSummary {
  result: WhatIfResult | null;
}

/** currentMachine is the machine the history ran on: the active classes, the sites' figures, the catalogue's caps. */
export async function currentMachine(db: DbOrTx, catalogue: Catalogue = configuredCatalogue()): Promise<WhatIfMachine> {
  const cluster = await clusterConfigFromCatalogue(db);
  const siteRows = await db.select().from(sites).orderBy(asc(sites.id));
  const peaks = await db.select({ id: resourceClasses.id, peakTflops: resourceClasses.peakTflops }).from(resourceClasses);
  return {
    sites: siteRows.map((s) => ({ id: s.id, country: s.country, eu: s.inEu, pueMilli: s.pueMilli, gridGco2PerKwh: s.gridGco2PerKwh, heatReusePermille: s.heatReusePermille, powerCapW: sitePowerCapW(catalogue, s.id) })),
    partitions: cluster.partitions,
    peakTflops: Object.fromEntries(peaks.map((p) => [p.id, Number(p.peakTflops ?? 0)])),
    policy: CURRENT_POLICY,
  };
}

/** What the proposal form offers: the classes and sites of the current machine, with their names in `locale`. */
export async function whatIfMachineView(db: Db, locale: Locale = 'en') {
  const machine = await currentMachine(db);
  const [classNames, siteNames] = [
    await db.select({ id: resourceClasses.id, name: resourceClasses.name, nameDe: resourceClasses.nameDe }).from(resourceClasses),
    await db.select({ id: sites.id, name: sites.name, nameDe: sites.nameDe }).from(sites),
  ];
  const nameOf = (rows: { id: string; name: string; nameDe: string | null }[], id: string) => {
    const row = rows.find((r) => r.id === id);
    return row ? localName(locale, row) : id;
  };
  return {
    classes: machine.partitions.map((p) => ({ id: p.name, name: nameOf(classNames, p.name), siteId: p.siteId, nodes: p.nodes, gpusPerNode: p.gpusPerNode, gpuModel: p.gpuModel })),
    sites: machine.sites.map((s) => ({ id: s.id, name: nameOf(siteNames, s.id), powerCapW: s.powerCapW, pueMilli: s.pueMilli, gridGco2PerKwh: s.gridGco2PerKwh })),
    policy: machine.policy,
  };
}

const dayStart = (day: string) => new Date(`${day}T00:00:00Z`);

/** periodSeconds is a run's history [from 00:00, the day after `to` 00:00) in UTC epoch seconds. */
export function periodSeconds(range: { from: string; to: string }): { fromSeconds: number; toSeconds: number } {
  return { fromSeconds: dayStart(range.from).getTime() / 1000, toSeconds: dayStart(addDays(range.to, 1)).getTime() / 1000 };
}

/**
 * loadHistory reads the jobs submitted in [from, to] (UTC days) as the replay needs them: run time
 * in the cluster's time (GPU-seconds ÷ GPUs once settled, else what the simulator was told), mean
 * GPU utilisation (the simulator's, else read back from the energy). Jobs that never started
 * (cancelled while queued, still waiting) and those whose run time is unknown are counted, not replayed.
 */
export async function loadHistory(db: DbOrTx, machine: WhatIfMachine, range: { from: string; to: string }) {
  const rows = await db
    .select({
      id: jobs.id,
      submittedAt: jobs.submittedAt,
      beginAt: jobs.beginAt,
      startedAt: jobs.startedAt,
      resourceClassId: jobs.resourceClassId,
      gpus: jobs.gpus,
      nodes: jobs.nodes,
      walltimeSeconds: jobs.walltimeSeconds,
      gpuSeconds: jobs.gpuSeconds,
      energyWh: jobs.energyWh,
      simulation: jobs.simulation,
      projectId: jobs.projectId,
      userId: jobs.userId,
      centsPerGpuHour: jobs.centsPerGpuHour,
    })
    .from(jobs)
    .where(and(gte(jobs.submittedAt, dayStart(range.from)), lt(jobs.submittedAt, dayStart(addDays(range.to, 1)))))
    .orderBy(asc(jobs.submittedAt), asc(jobs.id));
  const history: WhatIfJob[] = [];
  const recordedWaits: number[] = [];
  let neverStarted = 0;
  let unknownRuntime = 0;
  for (const r of rows) {
    if (!r.startedAt) {
      neverStarted++;
      continue;
    }
    const runtime = r.gpuSeconds !== null && r.gpus > 0 ? Math.round(r.gpuSeconds / r.gpus) : (r.simulation?.runtimeSeconds ?? null);
    if (runtime === null) {
      unknownRuntime++;
      continue;
    }
    const partition = machine.partitions.find((p) => p.name === r.resourceClassId);
    const util = r.simulation?.gpuUtilPercent ?? (partition && r.energyWh !== null ? meanGpuUtilPercent(partition, r.gpus, runtime, r.energyWh) : null) ?? 100;
    const submit = Math.floor(r.submittedAt.getTime() / 1000);
    const begin = r.beginAt ? Math.ceil(r.beginAt.getTime() / 1000) : null;
    recordedWaits.push(Math.max(0, Math.floor(r.startedAt.getTime() / 1000) - Math.max(submit, begin ?? 0)));
    history.push({
      id: r.id,
      submitSeconds: submit,
      beginSeconds: begin,
      partition: r.resourceClassId,
      gpus: r.gpus,
      nodes: r.nodes,
      walltimeSeconds: r.walltimeSeconds,
      runtimeSeconds: Math.min(Math.max(1, runtime), r.walltimeSeconds),
      gpuUtilPercent: util,
      account: r.projectId,
      user: r.userId,
      centsPerGpuHour: r.centsPerGpuHour,
    });
  }
  recordedWaits.sort((a, b) => a - b);
  return {
    jobs: history,
    counts: { submitted: rows.length, replayed: history.length, neverStarted, unknownRuntime, recordedWaitP50Seconds: nearestRank(recordedWaits, 50), recordedWaitP90Seconds: nearestRank(recordedWaits, 90) },
  };
}

/** createWhatIfRun checks the period and the proposal against the current machine and queues a run for the worker. */
export async function createWhatIfRun(db: Db, actor: Actor, input: { title: string; from: string; to: string; changes: WhatIfChange[] }, today: string): Promise<{ id: string }> {
  if (input.from > input.to) throw new AppError('BAD_REQUEST', 'whatIf.problem.periodOrder', {}, 'from');
  if (input.to > today) throw new AppError('BAD_REQUEST', 'whatIf.problem.future', { today }, 'to');
  if (input.from < addDays(input.to, -(WHAT_IF_MAX_DAYS - 1))) throw new AppError('BAD_REQUEST', 'whatIf.problem.tooLong', { days: WHAT_IF_MAX_DAYS }, 'from');
  const machine = await currentMachine(db);
  const problem = changeProblems(machine, input.changes)[0];
  if (problem) throw new AppError('BAD_REQUEST', problem.key as never, problem.params ?? {}, problem.field);
  return inTransaction(db, async (tx) => {
    const [row] = await tx.insert(whatIfRuns).values({ title: input.title, createdBy: actor.userId, fromDay: input.from, toDay: input.to, changes: input.changes }).returning({ id: whatIfRuns.id });
    await recordAudit(tx, { actorUserId: actor.userId, orgId: null, action: 'whatif.create', targetType: 'what_if_run', targetId: row!.id, data: { from: input.from, to: input.to, changes: input.changes }, isStaffAction: true });
    return { id: row!.id };
  });
}

const summaryColumns = {
  id: whatIfRuns.id,
  title: whatIfRuns.title,
  createdAt: whatIfRuns.createdAt,
  createdByName: users.name,
  fromDay: whatIfRuns.fromDay,
  toDay: whatIfRuns.toDay,
  changes: whatIfRuns.changes,
  status: whatIfRuns.status,
  progressPermille: whatIfRuns.progressPermille,
  startedAt: whatIfRuns.startedAt,
  finishedAt: whatIfRuns.finishedAt,
  error: whatIfRuns.error,
};

/** listWhatIfRuns returns the newest runs first (without their results). */
export async function listWhatIfRuns(db: Db, limit = 50): Promise<WhatIfRunSummary[]> {
  const rows = await db.select(summaryColumns).from(whatIfRuns).innerJoin(users, eq(users.id, whatIfRuns.createdBy)).orderBy(desc(whatIfRuns.createdAt), desc(whatIfRuns.id)).limit(limit);
  return rows.map((r) => ({ ...r, changes: r.changes as WhatIfChange[] }));
}

/** getWhatIfRun returns one run with its result. */
export async function getWhatIfRun(db: Db, id: string): Promise<WhatIfRunView> {
  const [row] = await db.select({ ...summaryColumns, result: whatIfRuns.result }).from(whatIfRuns).innerJoin(users, eq(users.id, whatIfRuns.createdBy)).where(eq(whatIfRuns.id, id));
  if (!row) throw new AppError('NOT_FOUND', 'whatIf.notFound');
  return { ...row, changes: row.changes as WhatIfChange[], result: (row.result as WhatIfResult | null) ?? null };
}

/** Takes the oldest queued run, or a running one whose worker stopped renewing its lease. */
async function claimRun(db: Db, now: Date) {
  const [row] = await db
    .update(whatIfRuns)
    .set({ status: 'running', leaseUntil: new Date(now.getTime() + LEASE_MS), attempts: sql`${whatIfRuns.attempts} + 1`, startedAt: sql`coalesce(${whatIfRuns.startedAt}, ${now.toISOString()}::timestamptz)`, progressPermille: 0 })
    .where(
      eq(
        whatIfRuns.id,
        sql`(select id from ${whatIfRuns} where ${or(eq(whatIfRuns.status, 'queued'), and(eq(whatIfRuns.status, 'running'), or(isNull(whatIfRuns.leaseUntil), lte(whatIfRuns.leaseUntil, now))))} order by created_at, id limit 1 for update skip locked)`,
      ),
    )
    .returning();
  return row ?? null;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * runDueWhatIf runs the oldest due what-if run to its end, if any: both replays in slices of about
 * `sliceMs` of CPU, yielding to the event loop between slices (the worker's other rounds go on) and
 * noting the progress (and renewing the lease) at most every `noteMs`. Returns the run's id, or null.
 */
export async function runDueWhatIf(db: Db, now: () => Date, options: { sliceMs?: number; noteMs?: number } = {}): Promise<string | null> {
  const run = await claimRun(db, now());
  if (!run) return null;
  const sliceMs = options.sliceMs ?? 40;
  const noteMs = options.noteMs ?? 1000;
  const fail = async (message: string) => {
    await db.update(whatIfRuns).set({ status: 'failed', error: message, leaseUntil: null, finishedAt: now() }).where(eq(whatIfRuns.id, run.id));
  };
  if (run.attempts > MAX_ATTEMPTS) {
    await fail(`given up after ${MAX_ATTEMPTS} attempts`);
    return run.id;
  }
  try {
    const started = Date.now();
    const machine = await currentMachine(db);
    const changes = run.changes as WhatIfChange[];
    const problem = changeProblems(machine, changes)[0];
    if (problem) {
      await fail(`the proposal no longer applies to the machine (${problem.field})`);
      return run.id;
    }
    const history = await loadHistory(db, machine, { from: run.fromDay, to: run.toDay });
    const proposal = applyChanges(machine, history.jobs, changes);
    const period = periodSeconds({ from: run.fromDay, to: run.toDay });
    const replays = [new WhatIfReplay(machine, history.jobs, period, { queueDepth: QUEUE_DEPTH }), new WhatIfReplay(proposal.machine, proposal.jobs, period, { queueDepth: QUEUE_DEPTH })];
    let noted = Date.now();
    for (let i = 0; i < replays.length; i++) {
      const replay = replays[i]!;
      for (;;) {
        const sliceEnd = Date.now() + sliceMs;
        let done = false;
        while (!done && Date.now() < sliceEnd) done = replay.step(200);
        if (done) break;
        if (Date.now() - noted >= noteMs) {
          noted = Date.now();
          const permille = Math.min(999, Math.floor(((i + replay.progress) / replays.length) * 1000));
          const [kept] = await db
            .update(whatIfRuns)
            .set({ progressPermille: permille, leaseUntil: new Date(now().getTime() + LEASE_MS) })
            .where(and(eq(whatIfRuns.id, run.id), eq(whatIfRuns.status, 'running'), eq(whatIfRuns.attempts, run.attempts)))
            .returning({ id: whatIfRuns.id });
          // Taken over by another worker (this one was too slow to renew): leave it to that one.
          if (!kept) return run.id;
        }
        await nextTurn();
      }
    }
    const result: WhatIfResult = { history: history.counts, current: replays[0]!.outcome(), proposed: replays[1]!.outcome(), elapsedMs: Date.now() - started };
    await db
      .update(whatIfRuns)
      .set({ status: 'done', progressPermille: 1000, result: result as unknown as Record<string, unknown>, leaseUntil: null, finishedAt: now(), error: null })
      .where(and(eq(whatIfRuns.id, run.id), eq(whatIfRuns.attempts, run.attempts)));
  } catch (error) {
    await fail(error instanceof Error ? error.message : String(error));
  }
  return run.id;
}
