// What of a job's reservation fits what is left, shown in the form before submitting: the same
// arithmetic the ledger and admission apply at submission (jobReservation, the GPUs-at-once rule of
// admission.ts), run on the figures of the moment. Pure; the submission still decides under its locks.
import { jobReservation } from './estimates';
import type { SpendingLimitKind } from '../billing/spending-limits';

/** A company's budgets inside the tenant (issue #24) as the form checks them: a project's or person's, with what it leaves in cents. */
export type BudgetLimitKind = Exclude<SpendingLimitKind, 'monthlyCap'>;

export interface ReservationRoom {
  unit: 'gpu_seconds' | 'cents';
  /** The allocation's available budget, in its unit. */
  available: number;
  /** Credit lines: what the tenant's monthly cap leaves this month, in cents; null without a cap. */
  monthCapLeftCents: number | null;
  /** The allocation's GPUs-at-once limit and the GPUs its active jobs hold; null without a limit. */
  gpusAtOnce: { limit: number; inUse: number } | null;
  /** Credit lines: what the project's monthly and total budget and the person's monthly limit leave, in cents (only those set). */
  budgetsLeftCents?: { limit: BudgetLimitKind; leftCents: number }[];
}

export interface ReservationAsked {
  gpus: number;
  walltimeSeconds: number;
  centsPerGpuHour: number;
  /** A job array: its tasks (each reserves as one job) and how many may run at once. */
  array?: { tasks: number; atOnce: number };
}

/** One limit the reservation breaks, with what would fit it. */
export type ReservationShortfall =
  | { limit: 'gpusAtOnce'; limitGpus: number; inUseGpus: number; requestedGpus: number; maxGpus: number }
  | {
      limit: 'budget' | 'monthlyCap' | BudgetLimitKind;
      unit: 'gpu_seconds' | 'cents';
      /** What the job would reserve and what is left, in `unit`. */
      needed: number;
      left: number;
      gpus: number;
      /** The longest walltime, in whole minutes, whose reservation on these GPUs fits what is left (0: none). */
      maxWalltimeSeconds: number;
    };

/**
 * maxWalltimeFitting returns the longest walltime in whole minutes whose reservation on `gpus` GPUs
 * stays within `left` (GPU-seconds, or cents at the tariff, rounded up as jobReservation does).
 */
export function maxWalltimeFitting(unit: 'gpu_seconds' | 'cents', left: number, gpus: number, centsPerGpuHour: number): number {
  if (left <= 0 || gpus <= 0) return 0;
  const seconds = unit === 'gpu_seconds' ? Math.floor(left / gpus) : Math.floor((left * 3600) / (gpus * centsPerGpuHour));
  let minutes = Math.floor(seconds / 60);
  // The cents reservation is rounded up: step back while rounding pushes it over.
  while (minutes > 0 && jobReservation({ unit, gpus, walltimeSeconds: minutes * 60, centsPerGpuHour }) > left) minutes--;
  return minutes * 60;
}

/** reservationShortfalls lists every limit a job's reservation would break now (GPUs at once, budget, monthly cap, the company's project and person budgets), each with what would fit. */
export function reservationShortfalls(room: ReservationRoom, asked: ReservationAsked): ReservationShortfall[] {
  const shortfalls: ReservationShortfall[] = [];
  const tasks = asked.array?.tasks ?? 1;
  const atOnceGpus = asked.gpus * (asked.array?.atOnce ?? 1);
  if (room.gpusAtOnce && room.gpusAtOnce.inUse + atOnceGpus > room.gpusAtOnce.limit) {
    const { limit, inUse } = room.gpusAtOnce;
    shortfalls.push({ limit: 'gpusAtOnce', limitGpus: limit, inUseGpus: inUse, requestedGpus: atOnceGpus, maxGpus: Math.max(0, limit - inUse) });
  }
  // An array reserves each task as one job: the walltime that fits is the one each task's share fits.
  const needed = tasks * jobReservation({ unit: room.unit, gpus: asked.gpus, walltimeSeconds: asked.walltimeSeconds, centsPerGpuHour: asked.centsPerGpuHour });
  const over = (limit: 'budget' | 'monthlyCap' | BudgetLimitKind, left: number) => {
    if (needed > left) shortfalls.push({ limit, unit: room.unit, needed, left: Math.max(0, left), gpus: asked.gpus, maxWalltimeSeconds: maxWalltimeFitting(room.unit, Math.floor(left / tasks), asked.gpus, asked.centsPerGpuHour) });
  };
  over('budget', room.available);
  if (room.unit === 'cents' && room.monthCapLeftCents !== null) over('monthlyCap', room.monthCapLeftCents);
  if (room.unit === 'cents') for (const b of room.budgetsLeftCents ?? []) over(b.limit, b.leftCents);
  return shortfalls;
}
