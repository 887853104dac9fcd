// A settled job's usage split over the UTC days it ran (as XDMoD does), so a day's figures are what
// ran on that day and daily utilisation cannot exceed what the cluster could deliver. Pure.
//
// Each quantity is split in proportion to the milliseconds of [startedAt, endedAt) in each day, by
// largest remainder: every day gets the floor of its exact share, and the units left over go one
// each to the days with the largest remainders (the earlier day on a tie), so the parts are integers
// that sum exactly to the job's total. The job itself (its count and its wait) is booked on the day
// it ended, the day its record, the usage CSV and the invoice list it under.
// rebuildRollups in server/services/usage/usage.ts does the same in SQL; keep the two in step.

export const APPORTIONED = ['gpuSeconds', 'costCents', 'energyWh', 'facilityEnergyWh', 'heatReusedWh', 'co2eGrams'] as const;
export type Apportioned = (typeof APPORTIONED)[number];
export type Quantities = Record<Apportioned, number>;

export interface DayPart extends Quantities {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** 1 on the day the job ended, else 0. */
  jobs: number;
  /** The job's wait, on the day it ended (0 elsewhere or when it never started). */
  waitSeconds: number;
  /** 1 on the day it ended if it started at all, else 0. */
  startedJobs: number;
}

export interface RunUsage extends Quantities {
  startedAt: Date | null;
  endedAt: Date;
  waitSeconds: number | null;
}

const DAY_MS = 86_400_000;

/** utcDay is the UTC day (YYYY-MM-DD) an instant falls on. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** runDays lists the UTC days a run [startMs, endMs) overlaps, with the milliseconds it ran in each. */
export function runDays(startMs: number, endMs: number): { day: string; ms: number }[] {
  const out: { day: string; ms: number }[] = [];
  for (let dayStart = Math.floor(startMs / DAY_MS) * DAY_MS; dayStart < endMs; dayStart += DAY_MS) {
    const ms = Math.min(endMs, dayStart + DAY_MS) - Math.max(startMs, dayStart);
    if (ms > 0) out.push({ day: utcDay(new Date(dayStart)), ms });
  }
  return out;
}

/**
 * largestRemainder splits a non-negative integer total over weights (non-negative integers, at least
 * one positive) into integers proportional to them that sum to the total; ties go to the earlier weight.
 */
export function largestRemainder(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((s, w) => s + BigInt(w), 0n);
  if (sum <= 0n) throw new RangeError('largestRemainder needs a positive weight');
  const t = BigInt(total);
  // BigInt: total × weight can pass 2^53 (GPU-seconds × milliseconds of a long run).
  const shares = weights.map((w, i) => ({ i, base: (t * BigInt(w)) / sum, rest: (t * BigInt(w)) % sum }));
  let left = t - shares.reduce((s, p) => s + p.base, 0n);
  const parts = shares.map((p) => p.base);
  for (const p of [...shares].sort((a, b) => (a.rest === b.rest ? a.i - b.i : a.rest > b.rest ? -1 : 1))) {
    if (left <= 0n) break;
    parts[p.i]! += 1n;
    left -= 1n;
  }
  return parts.map(Number);
}

/**
 * apportionUsage splits a settled job's usage over the UTC days it ran, in day order. A job that
 * never started or ran for no time books everything on the day it ended. The part of the end day is
 * always present (it carries the job's count), with zero quantities when the run ended at midnight.
 */
export function apportionUsage(job: RunUsage): DayPart[] {
  const endDay = utcDay(job.endedAt);
  const ran = job.startedAt && job.endedAt.getTime() > job.startedAt.getTime() ? runDays(job.startedAt.getTime(), job.endedAt.getTime()) : [];
  const days = ran.length > 0 ? ran : [{ day: endDay, ms: 1 }];
  const split = Object.fromEntries(APPORTIONED.map((q) => [q, largestRemainder(job[q], days.map((d) => d.ms))])) as Record<Apportioned, number[]>;
  const parts: DayPart[] = days.map((d, i) => ({
    day: d.day,
    jobs: 0,
    waitSeconds: 0,
    startedJobs: 0,
    ...(Object.fromEntries(APPORTIONED.map((q) => [q, split[q][i]!])) as Quantities),
  }));
  let last = parts.find((p) => p.day === endDay);
  if (!last) {
    last = { day: endDay, jobs: 0, waitSeconds: 0, startedJobs: 0, ...(Object.fromEntries(APPORTIONED.map((q) => [q, 0])) as Quantities) };
    parts.push(last);
  }
  last.jobs = 1;
  last.waitSeconds = job.waitSeconds ?? 0;
  last.startedJobs = job.waitSeconds === null ? 0 : 1;
  return parts;
}
