/**
 * Facility power cap per site (pure). Facility power = IT power × PUE; a site's
 * cap bounds it. All amounts here are IT power in centiwatts (W × 100), the
 * unit of energy.ts, so every comparison is exact in integers: facility ≤ cap
 * ⟺ IT centiW × pueMilli ≤ capW × 100,000 ⟺ IT centiW ≤ floor(capW × 100,000 / pueMilli).
 *
 * A job's power is its *increment*: its GPUs go from idle to busy at the job's
 * utilisation, (max − idle) × util per GPU. Node base power and idle GPUs count
 * nothing extra because nodes are always on (they are already in the site's draw).
 *
 * EASY with power as a second resource: a head job blocked at a capped site gets
 * a shadow time at which it fits in GPUs AND under the cap from then on (judged
 * by the running jobs' estimated ends, repaired nodes coming back at idle draw,
 * and the other heads' reservations at the site). A later job that would run past
 * a reservation's shadow time may only take power from that reservation's
 * headroom (the cap minus the head job and the highest projected draw after the
 * shadow time), so it never delays the head job.
 */
import { gpuPowerCentiW, nodePowerCentiW, type PowerModel } from './energy';
import type { ReleaseWalk, ShadowReservation } from './reservation';
import type { Site } from './types';

/** jobPowerCentiW is a job's IT power increment in centiwatts: its GPUs from idle to busy at its utilisation. */
export function jobPowerCentiW(model: PowerModel, gpus: number, gpuUtilPercent: number): number {
  return gpus * (gpuPowerCentiW(model, gpuUtilPercent) - model.gpuIdlePowerW * 100);
}

/** sitePueMilli is a site's PUE × 1000 (1000 when unset). */
export function sitePueMilli(site: Pick<Site, 'pueMilli'>): number {
  return site.pueMilli ?? 1000;
}

/** capItCentiW is the most IT power (centiW) a capped site may draw, or null when it has no cap. */
export function capItCentiW(site: Pick<Site, 'powerCapW' | 'pueMilli'>): number | null {
  if (site.powerCapW === undefined) return null;
  return Math.floor((site.powerCapW * 100_000) / sitePueMilli(site));
}

/** facilityPowerW is IT centiwatts × PUE in whole watts (rounded half up). */
export function facilityPowerW(itCentiW: number, pueMilli: number): number {
  return Math.round((itCentiW * pueMilli) / 100_000);
}

/** siteIdleCentiW is a site's IT draw with every node up and idle (node base power and idle GPUs), in centiwatts. */
export function siteIdleCentiW(partitions: readonly (PowerModel & { nodes: number })[]): number {
  return partitions.reduce((sum, p) => sum + p.nodes * nodePowerCentiW(p, [], false), 0);
}

/**
 * maxGpusUnderCap is the most GPUs of a partition that one job at 100 % utilisation may take with the rest
 * of its site idle and stay within `capCentiW` (IT): 0 when even the idle site is over it, Infinity when a
 * busy GPU draws no more than an idle one and the idle site fits.
 */
export function maxGpusUnderCap(capCentiW: number, idleCentiW: number, model: PowerModel): number {
  const headroom = capCentiW - idleCentiW;
  if (headroom < 0) return 0;
  const perGpu = jobPowerCentiW(model, 1, 100);
  return perGpu <= 0 ? Infinity : Math.floor(headroom / perGpu);
}

/** A change of a site's projected IT draw at a time (a running job ending: negative; a node repaired or a reserved head starting: positive). */
export interface PowerStep {
  atSeconds: number;
  deltaCentiW: number;
}

/** A head job's power reservation at a site: its shadow time and the IT power later jobs may still take past it. */
export interface PowerReservation {
  shadowSeconds: number;
  endSeconds: number;
  powerCentiW: number;
  headroomCentiW: number;
}

/** Inputs of `powerReservation`. */
export interface PowerHead {
  /** The site's IT draw now (centiW), including jobs started in this cycle. */
  drawCentiW: number;
  capCentiW: number;
  powerCentiW: number;
  walltimeSeconds: number;
  steps: readonly PowerStep[];
}

/** A site's projected draw: after each step time (sorted, unique, none before now) and the highest from each on. */
interface DrawProfile {
  times: number[];
  drawAfter: number[];
  maxFrom: number[];
}

/** drawProfile sums a site's projected steps (a step before now counts at now) into the draw after each step time. */
function drawProfile(drawCentiW: number, steps: readonly PowerStep[], nowSeconds: number): DrawProfile {
  const sorted = steps.map((s) => ({ atSeconds: Math.max(s.atSeconds, nowSeconds), deltaCentiW: s.deltaCentiW })).sort((a, b) => a.atSeconds - b.atSeconds);
  const times: number[] = [];
  const drawAfter: number[] = [];
  let draw = drawCentiW;
  for (const step of sorted) {
    draw += step.deltaCentiW;
    if (times.at(-1) === step.atSeconds) drawAfter[drawAfter.length - 1] = draw;
    else {
      times.push(step.atSeconds);
      drawAfter.push(draw);
    }
  }
  const maxFrom = new Array<number>(times.length);
  let max = -Infinity;
  for (let i = times.length - 1; i >= 0; i--) {
    max = Math.max(max, drawAfter[i]!);
    maxFrom[i] = max;
  }
  return { times, drawAfter, maxFrom };
}

/**
 * powerReservation finds the earliest time ≥ now at which the head job fits in GPUs (the walk, as
 * `easyShadow`) and its power fits under the cap at every later projected step; null when no such time
 * is known. The times tried are now, every step and every release.
 */
export function powerReservation(walk: ReleaseWalk, power: PowerHead, nowSeconds: number): { gpu: ShadowReservation; power: PowerReservation } | null {
  const profile = drawProfile(power.drawCentiW, power.steps, nowSeconds);
  // k: how many step times are ≤ t.
  let k = 0;
  for (let t = nowSeconds; ; ) {
    while (k < profile.times.length && profile.times[k]! <= t) k++;
    walk.releaseThrough(t);
    if (walk.fits()) {
      const drawNow = k > 0 ? profile.drawAfter[k - 1]! : power.drawCentiW;
      const headroom = power.capCentiW - power.powerCentiW - Math.max(drawNow, profile.maxFrom[k] ?? -Infinity);
      if (headroom >= 0) {
        return {
          gpu: walk.reservation(t),
          power: { shadowSeconds: t, endSeconds: t + power.walltimeSeconds, powerCentiW: power.powerCentiW, headroomCentiW: headroom },
        };
      }
    }
    const release = walk.nextAt();
    const step = profile.times[k];
    if (release === null && step === undefined) return null;
    t = Math.min(release === null ? Infinity : Math.max(release, nowSeconds), step ?? Infinity);
  }
}

/** The power state of one capped site during a cycle. */
export interface SitePowerGate {
  capCentiW: number;
  drawCentiW: number;
  reservations: PowerReservation[];
}

/**
 * powerAllows tells whether a job of `powerCentiW` estimated to end at `endSeconds` may start now at the site:
 * under the cap now, and within the headroom of every reservation whose shadow time it runs past.
 */
export function powerAllows(gate: SitePowerGate, powerCentiW: number, endSeconds: number): boolean {
  if (gate.drawCentiW + powerCentiW > gate.capCentiW) return false;
  for (const r of gate.reservations) if (endSeconds > r.shadowSeconds && powerCentiW > r.headroomCentiW) return false;
  return true;
}

/** chargePower records a start allowed by `powerAllows`. */
export function chargePower(gate: SitePowerGate, powerCentiW: number, endSeconds: number): void {
  gate.drawCentiW += powerCentiW;
  for (const r of gate.reservations) if (endSeconds > r.shadowSeconds) r.headroomCentiW -= powerCentiW;
}
