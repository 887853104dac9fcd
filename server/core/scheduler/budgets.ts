// The budgets a scheduler enforces itself (Slurm: GrpTRESMins=gres/gpu=N on the project's account in a
// partition), derived from the portal's allocations. Pure. Slurm's usage of an association never decays
// or resets, so a budget counts everything the project ever ran in the class: what its allocations
// charged and hold reserved, plus what the portal would still let it run now.
import type { BudgetHold, SchedulerBudget, SchedulerBudgetState } from './port';

const SECONDS_PER_MINUTE = 60;
const MINUTES_PER_HOUR = 60;

/** An allocation as the budgets need it (balance fields as in server/core/ledger/balance.ts). */
export interface BudgetAllocation {
  /** Null for a credit line (euro cents, any resource class at the tenant's tariff). */
  resourceClassId: string | null;
  unit: 'gpu_seconds' | 'cents';
  status: 'active' | 'expired' | 'suspended';
  periodStart: string;
  periodEnd: string;
  granted: number;
  charged: number;
  reserved: number;
  expired: number;
  /**
   * Credit lines only: GPU-seconds its jobs used per resource class — settled jobs' usage plus the
   * GPU-seconds open jobs hold reserved (GPUs × walltime), the credit line's charged + reserved in GPU terms.
   */
  usedGpuSecondsByClass?: Readonly<Record<string, number>>;
}

export interface BudgetProject {
  id: string;
  /** False when the tenant is suspended (or not yet verified): nothing new may run. */
  tenantActive: boolean;
  /** The tenant's tariff per resource class, cents per GPU-hour (what a credit line buys). */
  centsPerGpuHour: Readonly<Record<string, number>>;
  allocations: readonly BudgetAllocation[];
}

/** isUsable tells whether the portal still admits new jobs on an allocation today (active, in its period). */
export function isUsable(a: Pick<BudgetAllocation, 'status' | 'periodStart' | 'periodEnd'>, tenantActive: boolean, today: string): boolean {
  return tenantActive && a.status === 'active' && a.periodStart <= today && today < a.periodEnd;
}

/** creditGpuMinutes returns the whole GPU-minutes an amount of cents buys at a tariff (floor; nothing at no tariff). */
export function creditGpuMinutes(cents: number, centsPerGpuHour: number | undefined): number {
  if (!centsPerGpuHour || centsPerGpuHour <= 0 || cents <= 0) return 0;
  return Math.floor((cents * MINUTES_PER_HOUR) / centsPerGpuHour);
}

/**
 * projectBudgets returns a project's budget per resource class (account = project id, partition =
 * resource class id), sorted by partition. GPU-hour allocations of the class: a usable one contributes
 * granted − expired, any other (ended, expired, suspended, or the tenant suspended) what it charged plus
 * what is reserved, so nothing new can run on it; the sum is rounded up to whole minutes. Credit lines:
 * in every class with a tariff (or with usage), what the line used there, plus — while usable — the
 * minutes its remaining credit buys at the tariff (floor).
 */
export function projectBudgets(project: BudgetProject, today: string): SchedulerBudget[] {
  const seconds = new Map<string, number>();
  const creditMinutes = new Map<string, number>();
  const add = (map: Map<string, number>, partition: string, amount: number) => map.set(partition, (map.get(partition) ?? 0) + amount);
  for (const a of project.allocations) {
    const usable = isUsable(a, project.tenantActive, today);
    if (a.unit === 'gpu_seconds') {
      if (a.resourceClassId === null) continue; // a GPU-hour allocation always names its class
      add(seconds, a.resourceClassId, usable ? a.granted - a.expired : a.charged + a.reserved);
      continue;
    }
    const remaining = a.granted - a.charged - a.reserved - a.expired;
    const classes = new Set([...Object.keys(project.centsPerGpuHour), ...Object.keys(a.usedGpuSecondsByClass ?? {})]);
    for (const partition of classes) {
      add(seconds, partition, a.usedGpuSecondsByClass?.[partition] ?? 0);
      if (usable) add(creditMinutes, partition, creditGpuMinutes(remaining, project.centsPerGpuHour[partition]));
    }
  }
  return [...seconds.keys()].sort().map((partition) => ({
    account: project.id,
    partition,
    gpuMinutes: Math.ceil(Math.max(0, seconds.get(partition)!) / SECONDS_PER_MINUTE) + (creditMinutes.get(partition) ?? 0),
  }));
}

/** A budget the scheduler read back differently from what was asked (or not at all): drift. */
export interface BudgetMismatch {
  account: string;
  partition: string;
  asked: number;
  /** What the scheduler holds after the sync, null when it reported no such budget. */
  read: number | null;
}

/** budgetMismatches compares the budgets asked for with what the scheduler read back after the sync. */
export function budgetMismatches(asked: readonly SchedulerBudget[], read: readonly SchedulerBudgetState[]): BudgetMismatch[] {
  const key = (b: { account: string; partition: string }) => `${b.account}\u0000${b.partition}`;
  const held = new Map(read.map((b) => [key(b), b.gpuMinutes]));
  const notEnforced = new Set(read.filter((b) => b.notEnforced).map(key));
  return asked.filter((b) => !notEnforced.has(key(b)) && held.get(key(b)) !== b.gpuMinutes).map((b) => ({ account: b.account, partition: b.partition, asked: b.gpuMinutes, read: held.get(key(b)) ?? null }));
}

/**
 * roomGpuSeconds returns what the portal would still admit for a project in a class now, in GPU-seconds:
 * the usable GPU-hour allocations' available budget, or failing that the most a usable credit line buys
 * (the portal reserves a job on one allocation, so the largest one counts, not their sum).
 */
export function roomGpuSeconds(project: BudgetProject, partition: string, today: string): number {
  let room = 0;
  for (const a of project.allocations) {
    if (!isUsable(a, project.tenantActive, today)) continue;
    const free = a.granted - a.charged - a.reserved - a.expired;
    if (a.unit === 'gpu_seconds' && a.resourceClassId === partition) room = Math.max(room, free);
    if (a.unit === 'cents') room = Math.max(room, creditGpuMinutes(free, project.centsPerGpuHour[partition]) * SECONDS_PER_MINUTE);
  }
  return room;
}

/**
 * What a budget hold means for the portal: `staleLimit` — the portal would run the job (it submitted it
 * and still holds its budget, or it has room for a job submitted around it), so the scheduler's limit is
 * behind the portal's; `aroundPortal` — a job submitted around the portal waits on its limit, as meant,
 * but staff should know; `agreed` — the portal would not run it either.
 */
export type HoldDrift = 'staleLimit' | 'aroundPortal' | 'agreed';

export function holdDrift(hold: Pick<BudgetHold, 'portalJobId'>, portalHasBudget: boolean): HoldDrift {
  if (portalHasBudget) return 'staleLimit';
  return hold.portalJobId === null ? 'aroundPortal' : 'agreed';
}
