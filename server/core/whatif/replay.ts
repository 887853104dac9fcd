/**
 * Replays a history on a machine with the simulator's engine (the live cluster's rules: partitions,
 * policy, EASY backfilling, the facility power cap) and measures it as staff compare machines:
 *
 * - utilisation: GPU-seconds delivered inside the period ÷ (the machine's GPUs × the period);
 * - wait (start − the later of submit and begin): p50, p90 (nearest rank) and mean, over the jobs
 *   that ran (a job still waiting when the period ends is followed until it runs);
 * - bounded slowdown: mean of max(1, (wait + run) ÷ max(run, 10 s));
 * - jobs delayed by the cap: those that waited with PowerCap at least once;
 * - energy: the sites' IT draw (idle nodes too) integrated over the period; facility = IT × PUE;
 *   heat reused and CO2e from facility energy by the site's figures, as settlement books a job;
 * - revenue: each job's GPU-seconds inside the period at its price per GPU-hour.
 *
 * Jobs that can never run on the machine (`neverRuns`) are left out of the replay and counted.
 * `step` advances a bounded number of events so a caller can report progress between steps.
 */
import { createEngine, policyFromName, type ClusterEngine, type ClusterConfig } from '../sim';
import { neverRuns, type WhatIfJob, type WhatIfMachine } from './machine';

/** The replay's measures of one machine. */
export interface WhatIfOutcome {
  jobs: number;
  jobsRun: number;
  /** Jobs the machine cannot run at all, by why. */
  jobsNeverRun: { partition: number; nodes: number; walltime: number; power: number };
  gpus: number;
  utilisationBp: number;
  waitP50Seconds: number;
  waitP90Seconds: number;
  waitMeanSeconds: number;
  /** Mean bounded slowdown × 1000. */
  boundedSlowdownMilli: number;
  jobsDelayedByPowerCap: number;
  itEnergyWh: number;
  facilityEnergyWh: number;
  heatReusedWh: number;
  co2eGrams: number;
  revenueCents: number;
  /** Per partition: GPUs, jobs, waits, utilisation. */
  classes: { id: string; siteId: string; gpus: number; jobs: number; waitP50Seconds: number; waitP90Seconds: number; utilisationBp: number }[];
  /** Per site: the highest facility draw in the period, the cap, and each hour's highest draw (W). */
  sites: { id: string; peakFacilityPowerW: number; powerCapW: number | null; hourlyPeakW: number[] }[];
}

/** The bounded-slowdown threshold, as in the replay metrics of the literature. */
const SLOWDOWN_THRESHOLD_SECONDS = 10;

/** nearestRank is the p-th percentile (0 < p ≤ 100) of sorted values by nearest rank; 0 for none. */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function overlap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}

/** A replay in progress: `step` until it returns true, then `outcome`. */
export class WhatIfReplay {
  private readonly engine: ClusterEngine;
  private readonly run: WhatIfJob[];
  private readonly never = { partition: 0, nodes: 0, walltime: 0, power: 0 };
  private readonly hours: number;
  private last: number;
  private power: { it: number[]; facility: number[] };
  private readonly energyWs: { it: Float64Array; facility: Float64Array };
  private readonly peak: number[];
  private readonly hourly: number[][];
  private finished = false;

  constructor(
    private readonly machine: WhatIfMachine,
    private readonly jobs: readonly WhatIfJob[],
    private readonly period: { fromSeconds: number; toSeconds: number },
    options: { queueDepth?: number } = {},
  ) {
    const cluster: ClusterConfig = {
      sites: machine.sites.map((s) => ({ id: s.id, country: s.country, eu: s.eu, pueMilli: s.pueMilli, ...(s.powerCapW === null ? {} : { powerCapW: s.powerCapW }) })),
      partitions: machine.partitions,
    };
    this.engine = createEngine({ cluster, policy: policyFromName(machine.policy, options.queueDepth === undefined ? {} : { queueDepth: options.queueDepth }), seed: 1, startTimeSeconds: period.fromSeconds, nodeFailures: null });
    this.run = [];
    for (const job of jobs) {
      const why = neverRuns(machine, job);
      if (why) {
        this.never[why]++;
        continue;
      }
      this.run.push(job);
      this.engine.submit({
        id: job.id,
        submitTimeSeconds: Math.max(period.fromSeconds, job.submitSeconds),
        user: job.user,
        account: job.account,
        partition: job.partition,
        gpus: job.gpus,
        nodes: job.nodes,
        walltimeLimitSeconds: job.walltimeSeconds,
        runtimeSeconds: Math.min(job.runtimeSeconds, job.walltimeSeconds),
        gpuUtilPercent: job.gpuUtilPercent,
        exitCode: 0,
        ...(job.beginSeconds !== null && job.beginSeconds > job.submitSeconds ? { beginTimeSeconds: job.beginSeconds } : {}),
      });
    }
    const n = machine.sites.length;
    this.hours = Math.max(1, Math.ceil((period.toSeconds - period.fromSeconds) / 3600));
    this.last = period.fromSeconds;
    this.power = this.readPower();
    this.energyWs = { it: new Float64Array(n), facility: new Float64Array(n) };
    this.peak = new Array<number>(n).fill(0);
    this.hourly = machine.sites.map(() => new Array<number>(this.hours).fill(0));
  }

  private readPower(): { it: number[]; facility: number[] } {
    const view = new Map(this.engine.sitePower().map((s) => [s.siteId, s]));
    return {
      it: this.machine.sites.map((s) => view.get(s.id)?.itPowerW ?? 0),
      facility: this.machine.sites.map((s) => view.get(s.id)?.facilityPowerW ?? 0),
    };
  }

  /** Integrates the power held since the last event up to `t` (inside the period only). */
  private integrate(t: number): void {
    const from = Math.max(this.last, this.period.fromSeconds);
    const to = Math.min(t, this.period.toSeconds);
    if (to > from) {
      const firstHour = Math.floor((from - this.period.fromSeconds) / 3600);
      const lastHour = Math.floor((to - 1 - this.period.fromSeconds) / 3600);
      for (let i = 0; i < this.machine.sites.length; i++) {
        const w = this.power.facility[i]!;
        this.energyWs.it[i]! += this.power.it[i]! * (to - from);
        this.energyWs.facility[i]! += w * (to - from);
        if (w > this.peak[i]!) this.peak[i] = w;
        const hourly = this.hourly[i]!;
        for (let h = firstHour; h <= lastHour; h++) if (w > hourly[h]!) hourly[h] = w;
      }
    }
    this.last = Math.max(this.last, t);
  }

  /** The share of the replay done, 0..1 (by simulated time through the period; the tail after it counts as the last step). */
  get progress(): number {
    if (this.finished) return 1;
    const span = this.period.toSeconds - this.period.fromSeconds;
    return Math.min(0.99, Math.max(0, (this.engine.nowSeconds - this.period.fromSeconds) / span));
  }

  /** step processes up to `maxEvents` event instants; true when the replay has ended. */
  step(maxEvents = 500): boolean {
    for (let k = 0; k < maxEvents && !this.finished; k++) {
      const next = this.engine.nextEventSeconds();
      if (next === null) {
        this.integrate(this.period.toSeconds);
        this.finished = true;
        break;
      }
      this.integrate(next);
      this.engine.advanceTo(next);
      this.power = this.readPower();
    }
    return this.finished;
  }

  /** outcome measures the finished replay. */
  outcome(): WhatIfOutcome {
    while (!this.step(10_000));
    const { fromSeconds: from, toSeconds: to } = this.period;
    const span = to - from;
    const waits: number[] = [];
    const byClass = new Map<string, { waits: number[]; gpuSeconds: number }>();
    for (const p of this.machine.partitions) byClass.set(p.name, { waits: [], gpuSeconds: 0 });
    let delivered = 0;
    let revenue = 0;
    let slowdown = 0;
    let delayed = 0;
    for (const job of this.run) {
      const view = this.engine.job(job.id)!;
      if (view.heldByPowerCap) delayed++;
      if (view.startTimeSeconds === null || view.endTimeSeconds === null) continue;
      const runSeconds = view.endTimeSeconds - view.startTimeSeconds;
      const ready = Math.max(view.submitTimeSeconds, job.beginSeconds ?? 0);
      const wait = Math.max(0, view.startTimeSeconds - ready);
      waits.push(wait);
      slowdown += Math.max(1, (wait + runSeconds) / Math.max(runSeconds, SLOWDOWN_THRESHOLD_SECONDS));
      const inside = job.gpus * overlap(view.startTimeSeconds, view.endTimeSeconds, from, to);
      delivered += inside;
      revenue += Math.round((inside * job.centsPerGpuHour) / 3600);
      const c = byClass.get(job.partition)!;
      c.waits.push(wait);
      c.gpuSeconds += inside;
    }
    waits.sort((a, b) => a - b);
    const gpus = this.machine.partitions.reduce((s, p) => s + p.nodes * p.gpusPerNode, 0);
    const wh = (ws: number) => Math.round(ws / 3600);
    let itWh = 0;
    let facilityWh = 0;
    let heatWh = 0;
    let co2e = 0;
    this.machine.sites.forEach((site, i) => {
      const facility = wh(this.energyWs.facility[i]!);
      itWh += wh(this.energyWs.it[i]!);
      facilityWh += facility;
      heatWh += Math.round((facility * site.heatReusePermille) / 1000);
      co2e += Math.round((facility * site.gridGco2PerKwh) / 1000);
    });
    return {
      jobs: this.jobs.length,
      jobsRun: waits.length,
      jobsNeverRun: { ...this.never },
      gpus,
      utilisationBp: gpus && span > 0 ? Math.round((delivered * 10_000) / (gpus * span)) : 0,
      waitP50Seconds: nearestRank(waits, 50),
      waitP90Seconds: nearestRank(waits, 90),
      waitMeanSeconds: waits.length ? Math.round(waits.reduce((s, w) => s + w, 0) / waits.length) : 0,
      boundedSlowdownMilli: waits.length ? Math.round((slowdown / waits.length) * 1000) : 0,
      jobsDelayedByPowerCap: delayed,
      itEnergyWh: itWh,
      facilityEnergyWh: facilityWh,
      heatReusedWh: heatWh,
      co2eGrams: co2e,
      revenueCents: revenue,
      classes: this.machine.partitions.map((p) => {
        const c = byClass.get(p.name)!;
        c.waits.sort((a, b) => a - b);
        const classGpus = p.nodes * p.gpusPerNode;
        return { id: p.name, siteId: p.siteId, gpus: classGpus, jobs: c.waits.length, waitP50Seconds: nearestRank(c.waits, 50), waitP90Seconds: nearestRank(c.waits, 90), utilisationBp: classGpus && span > 0 ? Math.round((c.gpuSeconds * 10_000) / (classGpus * span)) : 0 };
      }),
      sites: this.machine.sites.map((s, i) => ({ id: s.id, peakFacilityPowerW: this.peak[i]!, powerCapW: s.powerCapW, hourlyPeakW: this.hourly[i]! })),
    };
  }
}
