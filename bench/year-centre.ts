/**
 * A generated year of a 10,000-GPU centre for the what-if benchmark: three sites, 1,250 nodes, and a
 * deterministic stream of about a million jobs (seeded mulberry32) shaped like a university centre's —
 * mostly single-node jobs of 1 to 8 GPUs, a tail of multi-node ones, run times from minutes to two
 * days (log-uniform), limits 1–3 × the run time rounded up to the hour (one job in twenty runs into
 * its limit), submissions following the working day and week. A million jobs so shaped ask for about
 * 85 % of the GPUs over the year (`askedLoad`). Time-independent, so runs compare.
 */
import type { Partition } from '~/server/core/sim';
import { createRng, nextFloat, nextInt, type RngState } from '~/server/core/sim/random';
import type { WhatIfJob, WhatIfMachine } from '~/server/core/whatif/machine';

const DAY = 86_400;
const HOUR = 3_600;
const TWO_DAYS = 2 * DAY;
/** 2027-01-01T00:00:00Z, a Friday: the year replayed. */
const YEAR_START = 1_798_761_600;

function partition(name: string, siteId: string, nodes: number, gpusPerNode: number, idleW: number, maxW: number, baseW: number): Partition {
  return { name, siteId, nodes, gpusPerNode, gpuModel: name, cpusPerNode: 96, memoryGbPerNode: 1536, gpuIdlePowerW: idleW, gpuMaxPowerW: maxW, nodeBasePowerW: baseW, maxWalltimeSeconds: TWO_DAYS };
}

/** yearMachine is the centre: 800 H100 and 300 B200 nodes of 8 GPUs, 300 L40S nodes of 4 GPUs (10,000 GPUs), multifactor. */
export function yearMachine(): WhatIfMachine {
  return {
    sites: [
      { id: 'north', country: 'FI', eu: true, pueMilli: 1040, gridGco2PerKwh: 60, heatReusePermille: 500, powerCapW: null },
      { id: 'centre', country: 'DE', eu: true, pueMilli: 1080, gridGco2PerKwh: 380, heatReusePermille: 700, powerCapW: null },
      { id: 'south', country: 'CH', eu: false, pueMilli: 1200, gridGco2PerKwh: 40, heatReusePermille: 0, powerCapW: null },
    ],
    partitions: [
      partition('h100', 'centre', 800, 8, 70, 700, 1500),
      partition('b200', 'north', 300, 8, 120, 1000, 2000),
      partition('l40s', 'south', 300, 4, 30, 350, 800),
    ],
    peakTflops: { h100: 989, b200: 2250, l40s: 362 },
    policy: 'multifactor',
  };
}

/** The period replayed: the whole year. */
export function yearPeriod(): { fromSeconds: number; toSeconds: number } {
  return { fromSeconds: YEAR_START, toSeconds: YEAR_START + 365 * DAY };
}

/** How busy submissions are at a time: working hours of weekdays three times the night, weekends half. */
function arrivalWeight(t: number): number {
  const day = Math.floor((t - YEAR_START) / DAY);
  const hour = Math.floor(((t - YEAR_START) % DAY) / HOUR);
  const weekend = (day + 4) % 7 >= 5; // day 0 is a Friday
  const working = hour >= 8 && hour < 19;
  return (working ? 3 : 1) * (weekend ? 0.5 : 1);
}

/** A job's shape: GPUs per node and nodes; most single-node, one in seven 2–16 full nodes. */
function shape(rng: RngState, gpusPerNode: number): { gpus: number; nodes: number } {
  if (nextInt(rng, 0, 6) > 0) {
    const perNode = Math.min(gpusPerNode, [1, 1, 1, 2, 2, 4, 4, 8, 8, 8][nextInt(rng, 0, 9)]!);
    return { gpus: perNode, nodes: 1 };
  }
  const nodes = [2, 2, 2, 4, 4, 8, 16][nextInt(rng, 0, 6)]!;
  return { gpus: nodes * gpusPerNode, nodes };
}

/** A run time from 5 minutes to 2 days, log-uniform. */
function runtime(rng: RngState): number {
  return Math.round(300 * Math.exp(nextFloat(rng) * Math.log(TWO_DAYS / 300)));
}

/** machineGpus is the machine's GPU count. */
export function machineGpus(machine: WhatIfMachine): number {
  return machine.partitions.reduce((s, p) => s + p.nodes * p.gpusPerNode, 0);
}

/** askedLoad is the GPU time the jobs ask for (run time, cut at the limit) over the machine's GPU time in the period. */
export function askedLoad(machine: WhatIfMachine, jobs: readonly WhatIfJob[], period: { fromSeconds: number; toSeconds: number }): number {
  const asked = jobs.reduce((s, j) => s + j.gpus * Math.min(j.runtimeSeconds, j.walltimeSeconds), 0);
  return asked / (machineGpus(machine) * (period.toSeconds - period.fromSeconds));
}

/**
 * yearJobs draws `count` jobs for the machine, spread over the year's first `days` days: shapes and run
 * times, each arriving after the last as a Poisson stream whose rate follows `arrivalWeight`.
 */
export function yearJobs(machine: WhatIfMachine, count: number, days = 365, seed = 2027): WhatIfJob[] {
  const rng = createRng(seed);
  const gpus = machineGpus(machine);
  const jobs: WhatIfJob[] = [];
  for (let i = 0; i < count; i++) {
    // A partition in proportion to its GPUs.
    let pick = nextInt(rng, 0, gpus - 1);
    const p = machine.partitions.find((q) => (pick -= q.nodes * q.gpusPerNode) < 0)!;
    const { gpus: jobGpus, nodes } = shape(rng, p.gpusPerNode);
    const run = runtime(rng);
    const limit = Math.min(TWO_DAYS, Math.ceil((run * (1 + 2 * nextFloat(rng))) / HOUR) * HOUR);
    const account = Math.floor(200 * nextFloat(rng) ** 2);
    jobs.push({
      id: `y${i}`,
      submitSeconds: 0,
      beginSeconds: null,
      partition: p.name,
      gpus: jobGpus,
      nodes,
      walltimeSeconds: limit,
      runtimeSeconds: nextInt(rng, 0, 19) === 0 ? limit + HOUR : run,
      gpuUtilPercent: nextInt(rng, 40, 100),
      account: `project-${account}`,
      user: `user-${account}-${nextInt(rng, 0, 3)}`,
      centsPerGpuHour: 200,
    });
  }
  // The mean weight over the days, so that the stream's mean gap spreads the jobs over them.
  const { fromSeconds } = yearPeriod();
  const toSeconds = fromSeconds + days * DAY;
  let weights = 0;
  for (let t = fromSeconds; t < toSeconds; t += HOUR) weights += arrivalWeight(t);
  const meanWeight = weights / (days * 24);
  const meanGap = (toSeconds - fromSeconds) / count;
  let t = fromSeconds;
  for (const job of jobs) {
    t += Math.round((-Math.log(1 - nextFloat(rng)) * meanGap * meanWeight) / arrivalWeight(t));
    job.submitSeconds = t;
  }
  return jobs;
}
