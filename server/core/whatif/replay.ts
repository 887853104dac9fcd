/**
 * Replays a history on a machine with the simulator's engine (the live cluster's rules: partitions,
 * policy, EASY backfilling, the facility power cap) and measures it as staff compare machines:
 *
 * - utilisation: GPU-seconds delivered inside the period ÷ (the machine's GPUs × the period);
 * - wait (start − the later of submit and begin): p50, p90 (nearest rank) and mean, over the jobs
 *   that ran (a job still waiting when the period ends is followed until it runs);
 * - bounded slowdown: mean of max(1, (wait + run) ÷ max(run, 10 s));
 * - jobs delayed by the cap: those that waited with PowerCap at least once;
 * - energy: the sites' IT draw (idle nodes too, from the jobs' starts and ends by the engine's power
 *   model) integrated over the period; facility = IT × PUE;
 *   heat reused and CO2e from facility energy by the site's figures, as settlement books a job;
 * - revenue: each job's GPU-seconds inside the period at its price per GPU-hour.
 *
 * Jobs that can never run on the machine (`neverRuns`) are left out of the replay and counted.
 * `step` advances a bounded number of events so a caller can report progress between steps. Jobs are
 * submitted to the engine as its clock reaches their submit time (in submit order, ties as given), so
 * its event queue holds what is near, not the whole history; the schedule is the same as submitting
 * all up front (arrivals at one instant keep their order, and no event is ever pushed into the past).
 */
import { createEngine, facilityPowerW, jobPowerCentiW, policyFromName, siteIdleCentiW, type ClusterConfig, type ClusterEngine, type JobSpec, type JobView } from '../sim';
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
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
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
  /** The jobs run, by submit time (ties as given); the first `submitted` are in the engine. */
  private readonly bySubmit: WhatIfJob[];
  private submitted = 0;
  private finished = false;
  /**
   * What the outcome needs of each job run (by its index in `run`), taken as it ends; the engine then
   * forgets it (pruneFinished), so a long replay holds the jobs queued and running, not all it has run.
   */
  private readonly indexOf = new Map<string, number>();
  private readonly ended: { submit: Float64Array; start: Float64Array; end: Float64Array; delayed: Uint8Array; taken: Uint8Array };

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
    this.run = [];
    for (const job of jobs) {
      const why = neverRuns(machine, job);
      if (why) this.never[why]++;
      else this.run.push(job);
    }
    // Every account from the start, in the order of the jobs (as submitting them all up front makes them): fair share counts their shares.
    const accounts = [...new Set(this.run.map((job) => job.account))].map((name) => ({ name }));
    this.engine = createEngine({ cluster, policy: policyFromName(machine.policy, options.queueDepth === undefined ? {} : { queueDepth: options.queueDepth }), accounts, seed: 1, startTimeSeconds: period.fromSeconds, nodeFailures: null });
    this.run.forEach((job, i) => this.indexOf.set(job.id, i));
    const n = this.run.length;
    this.ended = { submit: new Float64Array(n), start: new Float64Array(n), end: new Float64Array(n), delayed: new Uint8Array(n), taken: new Uint8Array(n) };
    this.bySubmit = this.run.slice().sort((a, b) => this.submitOf(a) - this.submitOf(b));
    // An invalid job throws here, as submitting it up front would.
    for (const job of this.bySubmit) this.engine.validate(this.spec(job));
  }

  /** A job's submit time in the replay: not before the period. */
  private submitOf(job: WhatIfJob): number {
    return Math.max(this.period.fromSeconds, job.submitSeconds);
  }

  /** The job as the engine takes it (made when it is submitted, so the replay holds no second copy). */
  private spec(job: WhatIfJob): JobSpec {
    return {
      id: job.id,
      submitTimeSeconds: this.submitOf(job),
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
    };
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
      const next = this.nextInstant();
      if (next === null) this.finished = true;
      else {
        this.submitThrough(next);
        this.engine.advanceTo(next);
      }
    }
    this.takeEnded();
    return this.finished;
  }

  /** takeEnded keeps what the outcome needs of the jobs ended since the last step and lets the engine forget them. */
  private takeEnded(): void {
    const e = this.ended;
    for (const view of this.engine.endedJobs()) {
      const i = this.indexOf.get(view.id);
      if (i === undefined || view.startTimeSeconds === null || view.endTimeSeconds === null) continue;
      e.submit[i] = view.submitTimeSeconds;
      e.start[i] = view.startTimeSeconds;
      e.end[i] = view.endTimeSeconds;
      e.delayed[i] = view.heldByPowerCap ? 1 : 0;
      e.taken[i] = 1;
    }
    this.engine.pruneFinished(Number.POSITIVE_INFINITY);
  }

  /** The outcome's view of a job run: as kept when it ended, else as the engine has it. */
  private endedView(job: WhatIfJob, i: number): Pick<JobView, 'heldByPowerCap' | 'submitTimeSeconds' | 'startTimeSeconds' | 'endTimeSeconds'> {
    const e = this.ended;
    if (e.taken[i]) return { ...(e.delayed[i] === 1 ? { heldByPowerCap: true } : {}), submitTimeSeconds: e.submit[i]!, startTimeSeconds: e.start[i]!, endTimeSeconds: e.end[i]! };
    return this.engine.job(job.id)!;
  }

  /** nextInstant is the next time anything happens: an engine event or a job still to submit. */
  private nextInstant(): number | null {
    const event = this.engine.nextEventSeconds();
    const next = this.bySubmit[this.submitted];
    if (next === undefined) return event;
    const submit = this.submitOf(next);
    return event === null ? submit : Math.min(event, submit);
  }

  /** submitThrough submits every job due by t (the clock is before t, so none is in the past). */
  private submitThrough(t: number): void {
    for (let job = this.bySubmit[this.submitted]; job && this.submitOf(job) <= t; job = this.bySubmit[++this.submitted]) this.engine.submit(this.spec(job));
  }

  /**
   * The sites' power through the period, from the jobs' starts and ends: a site draws its idle power
   * (every node up; the replay has no failures) plus the increment of each job running there, as the
   * engine's power model has it. Returns each site's IT energy (centiW·s), highest facility draw and
   * hourly highest facility draw (W).
   */
  private sitePower(starts: Float64Array, ends: Float64Array) {
    const { fromSeconds: from, toSeconds: to } = this.period;
    const hours = Math.max(1, Math.ceil((to - from) / 3600));
    return this.machine.sites.map((site) => {
      const partitions = new Map(this.machine.partitions.filter((p) => p.siteId === site.id).map((p) => [p.name, p]));
      const idle = siteIdleCentiW([...partitions.values()]);
      // The steps as two typed columns (a job's start and end), ordered through an index.
      const at = new Float64Array(2 * this.run.length);
      const delta = new Float64Array(2 * this.run.length);
      let n = 0;
      this.run.forEach((job, i) => {
        const p = partitions.get(job.partition);
        if (!p || Number.isNaN(starts[i]!)) return;
        const power = jobPowerCentiW(p, job.gpus, job.gpuUtilPercent);
        at[n] = starts[i]!;
        delta[n++] = power;
        at[n] = ends[i]!;
        delta[n++] = -power;
      });
      // An end before a start at the same instant, as the engine frees before it starts.
      const order = new Uint32Array(n).map((_, k) => k).sort((a, b) => at[a]! - at[b]! || delta[a]! - delta[b]!);
      let draw = idle;
      let last = from;
      let energy = 0;
      let peak = 0;
      const hourly = new Array<number>(hours).fill(0);
      const hold = (until: number) => {
        const a = Math.max(last, from);
        const b = Math.min(until, to);
        if (b > a) {
          energy += draw * (b - a);
          const w = facilityPowerW(draw, site.pueMilli);
          if (w > peak) peak = w;
          for (let h = Math.floor((a - from) / 3600); h <= Math.floor((b - 1 - from) / 3600); h++) if (w > hourly[h]!) hourly[h] = w;
        }
        last = Math.max(last, until);
      };
      for (const k of order) {
        if (at[k] !== last) hold(at[k]!);
        draw += delta[k]!;
      }
      hold(to);
      return { itCentiWs: energy, peakW: peak, hourly };
    });
  }

  /** outcome measures the finished replay. */
  outcome(): WhatIfOutcome {
    while (!this.step(10_000));
    const { fromSeconds: from, toSeconds: to } = this.period;
    const span = to - from;
    const waits: number[] = [];
    const byClass = new Map<string, { waits: number[]; gpuSeconds: number }>();
    for (const p of this.machine.partitions) byClass.set(p.name, { waits: [], gpuSeconds: 0 });
    // Each job's start and end by its index in `run` (NaN: it did not run).
    const ranFrom = new Float64Array(this.run.length).fill(Number.NaN);
    const ranTo = new Float64Array(this.run.length).fill(Number.NaN);
    let delivered = 0;
    let revenue = 0;
    let slowdown = 0;
    let delayed = 0;
    for (const [i, job] of this.run.entries()) {
      const view = this.endedView(job, i);
      if (view.heldByPowerCap) delayed++;
      if (view.startTimeSeconds === null || view.endTimeSeconds === null) continue;
      ranFrom[i] = view.startTimeSeconds;
      ranTo[i] = view.endTimeSeconds;
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
    // Ascending (numeric typed sort: the same order as a comparator's, much faster on a year of jobs).
    const sorted = Float64Array.from(waits).sort();
    const gpus = this.machine.partitions.reduce((s, p) => s + p.nodes * p.gpusPerNode, 0);
    const power = this.sitePower(ranFrom, ranTo);
    let itWh = 0;
    let facilityWh = 0;
    let heatWh = 0;
    let co2e = 0;
    this.machine.sites.forEach((site, i) => {
      const itCentiWs = power[i]!.itCentiWs;
      const facility = Math.round((itCentiWs * site.pueMilli) / (1000 * 100 * 3600));
      itWh += Math.round(itCentiWs / (100 * 3600));
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
      waitP50Seconds: nearestRank(sorted, 50),
      waitP90Seconds: nearestRank(sorted, 90),
      waitMeanSeconds: waits.length ? Math.round(sorted.reduce((s, w) => s + w, 0) / waits.length) : 0,
      boundedSlowdownMilli: waits.length ? Math.round((slowdown / waits.length) * 1000) : 0,
      jobsDelayedByPowerCap: delayed,
      itEnergyWh: itWh,
      facilityEnergyWh: facilityWh,
      heatReusedWh: heatWh,
      co2eGrams: co2e,
      revenueCents: revenue,
      classes: this.machine.partitions.map((p) => {
        const c = byClass.get(p.name)!;
        const classWaits = Float64Array.from(c.waits).sort();
        const classGpus = p.nodes * p.gpusPerNode;
        return { id: p.name, siteId: p.siteId, gpus: classGpus, jobs: c.waits.length, waitP50Seconds: nearestRank(classWaits, 50), waitP90Seconds: nearestRank(classWaits, 90), utilisationBp: classGpus && span > 0 ? Math.round((c.gpuSeconds * 10_000) / (classGpus * span)) : 0 };
      }),
      sites: this.machine.sites.map((s, i) => ({ id: s.id, peakFacilityPowerW: power[i]!.peakW, powerCapW: s.powerCapW, hourlyPeakW: power[i]!.hourly })),
    };
  }
}
