/**
 * One scheduling cycle as a pure function over a snapshot (in the spirit of
 * Kueue's scheduler): the engine builds the input, this decides which pending
 * jobs start where and why the others wait, and the engine applies it.
 *
 *   1. Snapshot  — working copies of free GPUs per node (−1 = down) and of
 *                  the quota counters.
 *   2. Order     — compute priorities, sort the queue (submit order or multifactor);
 *                  with a queue depth, only the first jobs of each partition (order.ts).
 *   3. Walk      — for each job in order, per partition:
 *        3·. waiting on other jobs → Dependency / DependencyNeverSatisfied, begin time not reached →
 *            BeginTime (skipped);
 *        3a. partition time limit  → PartitionTimeLimit (skipped);
 *        3b. account limits         → QOSMaxGRESPerUser / AssocGrpGRESMinutes (skipped);
 *        3c. partition still open   → start if it fits now (GPUs, and at a
 *            capped site power: power.ts); otherwise the partition is blocked,
 *            the job waits for Resources (PowerCap when only power is short)
 *            and (EASY) gets a reservation;
 *        3d. partition blocked      → EASY: backfill if it keeps the
 *            reservation (GPUs and power); otherwise (and always under FIFO)
 *            wait for Priority (PowerCap when only power forbids the backfill).
 *   4. Emit      — starts and pending reasons.
 */
import { fairShareFactor } from './fairshare';
import { limitReason } from './limits';
import { mergedQueue, sortedQueue, type CyclePendingJob, type CycleQueue, type QueuedJob } from './order';
import { placeJob } from './placement';
import { chargePower, powerAllows, powerReservation, type PowerStep, type SitePowerGate } from './power';
import { multifactorPriority } from './priority';
import { backfillKeepsReservation, easyReservation, type HeadShape, type Release, type Reservation } from './reservation';
import type { AccountLimits, Partition, PendingReason, PolicyConfig } from './types';

/** A node as the cycle sees it. */
export interface CycleNode {
  partition: number;
  freeGpus: number;
  down: boolean;
  repairAtSeconds: number | null;
}

/** A running job as the cycle sees it. */
export interface CycleRunningJob {
  id: string;
  partition: number;
  user: string;
  account: string;
  gpus: number;
  nodeIndices: readonly number[];
  walltimeLimitSeconds: number;
  startTimeSeconds: number;
  /** IT power increment in centiW (power.ts); only read at capped sites. */
  powerCentiW?: number;
}

/** An account as the cycle sees it. */
export interface CycleAccount {
  shares: number;
  limits: AccountLimits | undefined;
  decayedUsageGpuSeconds: number;
  finishedGpuSeconds: number;
}

/** Everything one cycle looks at. */
export interface CycleInput {
  nowSeconds: number;
  policy: PolicyConfig;
  partitions: readonly Partition[];
  nodes: readonly CycleNode[];
  running: readonly CycleRunningJob[];
  /** Every pending job, in any order (the cycle sorts them); ignored when `queues` is given. */
  pending: readonly CyclePendingJob[];
  /** With `policy.queueDepth`: the pending jobs split by partition and account, so the cycle reads only what it needs. */
  queues?: readonly CycleQueue[];
  accounts: ReadonlyMap<string, CycleAccount>;
  /** Power caps; unset when no site has one (then power is never looked at). */
  power?: CyclePower;
}

/** The sites' power as the cycle sees it (IT centiwatts, power.ts). */
export interface CyclePower {
  /** The site index of each partition. */
  partitionSite: readonly number[];
  /** Per site: its cap as IT power and its IT draw now; null when the site has no cap. */
  sites: readonly ({ capCentiW: number; drawCentiW: number } | null)[];
}

/** A decision to start a job on these nodes. */
export interface CycleStart {
  id: string;
  nodeIndices: number[];
}

/** A job left pending, with its reason and priority. */
export interface CycleWait {
  id: string;
  reason: PendingReason;
  priority: number;
}

/** The cycle's output. */
export interface CycleDecision {
  starts: CycleStart[];
  waits: CycleWait[];
  /** Priority of every pending job considered (started or not): all of them, or those within the queue depth. */
  priorities: Map<string, number>;
  /**
   * A partition that started jobs had more pending jobs than the queue depth let the cycle read:
   * run another cycle at the same instant, so free GPUs never wait for an unrelated event.
   */
  rerun: boolean;
}

interface PartitionGate {
  blocked: boolean;
  head: HeadShape | null;
  reservation: Reservation | null;
}

/** A capped site's power gate for one cycle, and the node repairs that raise its draw. */
interface SiteGate extends SitePowerGate {
  members: Set<number>;
  repairs: PowerStep[];
}

/** fairShareFactors computes each account's fair-share factor from decayed usage and shares. */
export function fairShareFactors(accounts: ReadonlyMap<string, CycleAccount>): Map<string, number> {
  let totalUsage = 0;
  let totalShares = 0;
  for (const a of accounts.values()) {
    totalUsage += a.decayedUsageGpuSeconds;
    totalShares += a.shares;
  }
  const out = new Map<string, number>();
  for (const [name, a] of accounts) out.set(name, fairShareFactor(a.decayedUsageGpuSeconds, totalUsage, a.shares, totalShares));
  return out;
}

/** scheduleCycle runs phases 1–4 over the input and returns the decisions; it does not modify the input. */
export function scheduleCycle(input: CycleInput): CycleDecision {
  const { nowSeconds: now, policy, partitions } = input;

  // Phase 1: snapshot.
  const free = input.nodes.map((n) => (n.down ? -1 : n.freeGpus));
  const partitionNodes: number[][] = partitions.map(() => []);
  input.nodes.forEach((n, i) => partitionNodes[n.partition]?.push(i));
  const running: CycleRunningJob[] = input.running.slice();
  const userGpus = new Map<string, number>();
  const committed = new Map<string, number>();
  for (const [name, a] of input.accounts) committed.set(name, a.finishedGpuSeconds);
  const userKey = (account: string, user: string): string => `${account}\u0000${user}`;
  const chargeStart = (job: { account: string; user: string; gpus: number; walltimeLimitSeconds: number }): void => {
    const key = userKey(job.account, job.user);
    userGpus.set(key, (userGpus.get(key) ?? 0) + job.gpus);
    committed.set(job.account, (committed.get(job.account) ?? 0) + job.gpus * job.walltimeLimitSeconds);
  };
  for (const r of running) chargeStart(r);

  const power = input.power;
  const siteGates: (SiteGate | null)[] = (power?.sites ?? []).map((site) =>
    site ? { capCentiW: site.capCentiW, drawCentiW: site.drawCentiW, reservations: [], members: new Set<number>(), repairs: [] } : null,
  );
  if (power) {
    power.partitionSite.forEach((siteIndex, partition) => siteGates[siteIndex]?.members.add(partition));
    input.nodes.forEach((n) => {
      const gate = siteGates[power.partitionSite[n.partition] ?? -1];
      const p = partitions[n.partition];
      if (!gate || !p || !n.down || n.repairAtSeconds === null) return;
      gate.repairs.push({ atSeconds: n.repairAtSeconds, deltaCentiW: (p.nodeBasePowerW + p.gpusPerNode * p.gpuIdlePowerW) * 100 });
    });
  }
  const siteGateOf = (partition: number): SiteGate | null => (power ? (siteGates[power.partitionSite[partition] ?? -1] ?? null) : null);

  // Phase 2: order.
  const factors = policy.order === 'multifactor' ? fairShareFactors(input.accounts) : null;
  const priorityOf = (job: CyclePendingJob): number =>
    factors ? multifactorPriority(now - job.submitTimeSeconds, factors.get(job.account) ?? 1, policy) : 0;
  const cut = new Set<number>();
  const queue: Iterable<QueuedJob> =
    input.queues && policy.queueDepth !== undefined
      ? mergedQueue(input.queues, priorityOf, policy, policy.queueDepth, cut)
      : sortedQueue(input.pending, priorityOf, policy, cut);
  const priorities = new Map<string, number>();

  // Phase 3: walk.
  const gates: PartitionGate[] = partitions.map(() => ({ blocked: false, head: null, reservation: null }));
  const starts: CycleStart[] = [];
  const waits: CycleWait[] = [];
  const startedIn = new Set<number>();
  const start = (job: CyclePendingJob, nodeIndices: number[], perNode: number): void => {
    const site = siteGateOf(job.partition);
    if (site) chargePower(site, job.powerCentiW ?? 0, now + job.walltimeLimitSeconds);
    for (const node of nodeIndices) free[node] = (free[node] ?? 0) - perNode;
    starts.push({ id: job.id, nodeIndices });
    startedIn.add(job.partition);
    running.push({ ...job, nodeIndices, startTimeSeconds: now });
    chargeStart(job);
  };

  for (const { job, priority } of queue) {
    priorities.set(job.id, priority);
    const partition = partitions[job.partition];
    const gate = gates[job.partition];
    const nodesOfPartition = partitionNodes[job.partition];
    if (!partition || !gate || !nodesOfPartition) continue;
    const wait = (reason: PendingReason): void => {
      waits.push({ id: job.id, reason, priority });
    };

    // 3·.
    if (job.heldBy) {
      wait(job.heldBy);
      continue;
    }
    if (job.beginSeconds !== undefined && job.beginSeconds > now) {
      wait('BeginTime');
      continue;
    }
    // 3a.
    if (job.walltimeLimitSeconds > partition.maxWalltimeSeconds) {
      wait('PartitionTimeLimit');
      continue;
    }
    // 3b.
    const account = input.accounts.get(job.account);
    const limited = limitReason(
      {
        gpus: job.gpus,
        walltimeLimitSeconds: job.walltimeLimitSeconds,
        userRunningGpus: userGpus.get(userKey(job.account, job.user)) ?? 0,
        accountCommittedGpuSeconds: committed.get(job.account) ?? 0,
      },
      account?.limits,
    );
    if (limited) {
      wait(limited);
      continue;
    }

    const perNode = job.gpus / job.nodes;
    const site = siteGateOf(job.partition);
    const jobPower = job.powerCentiW ?? 0;
    const estimatedEnd = now + job.walltimeLimitSeconds;
    // 3c.
    if (!gate.blocked) {
      const placement = placeJob(free, nodesOfPartition, job.nodes, perNode);
      const powerOk = !site || powerAllows(site, jobPower, estimatedEnd);
      if (placement && powerOk) {
        start(job, placement, perNode);
        continue;
      }
      gate.blocked = true;
      if (policy.backfill === 'easy') {
        gate.head = { partitionNodes: nodesOfPartition, nodeCount: job.nodes, gpusPerNode: perNode };
        const releases = partitionReleases(input, running, job.partition);
        if (site) {
          const head = {
            drawCentiW: site.drawCentiW,
            capCentiW: site.capCentiW,
            powerCentiW: jobPower,
            walltimeSeconds: job.walltimeLimitSeconds,
            steps: sitePowerSteps(site, running),
          };
          const reserved = powerReservation(free, gate.head, releases, head, now);
          gate.reservation = reserved?.gpu ?? null;
          if (reserved) site.reservations.push(reserved.power);
        } else {
          gate.reservation = easyReservation(free, gate.head, releases, now);
        }
      }
      wait(placement ? 'PowerCap' : 'Resources');
      continue;
    }
    // 3d.
    const placement = policy.backfill === 'easy' ? placeJob(free, nodesOfPartition, job.nodes, perNode) : null;
    if (placement) {
      const after =
        gate.reservation && gate.head
          ? backfillKeepsReservation(gate.reservation, gate.head, {
              nodeIndices: placement,
              gpusPerNode: perNode,
              estimatedEndSeconds: estimatedEnd,
            })
          : undefined;
      if (after !== null) {
        if (site && !powerAllows(site, jobPower, estimatedEnd)) {
          wait('PowerCap');
          continue;
        }
        if (after && gate.reservation) gate.reservation = { shadowSeconds: gate.reservation.shadowSeconds, freeAtShadow: after };
        start(job, placement, perNode);
        continue;
      }
    }
    wait('Priority');
  }

  // Phase 4: emit.
  const rerun = [...cut].some((partition) => startedIn.has(partition));
  return { starts, waits, priorities, rerun };
}

/** sitePowerSteps lists how a capped site's draw will change: running jobs of its partitions end, nodes are repaired, reserved heads start and end. */
function sitePowerSteps(site: SiteGate, running: readonly CycleRunningJob[]): PowerStep[] {
  const steps: PowerStep[] = site.repairs.slice();
  for (const r of running) {
    if (!site.members.has(r.partition)) continue;
    steps.push({ atSeconds: r.startTimeSeconds + r.walltimeLimitSeconds, deltaCentiW: -(r.powerCentiW ?? 0) });
  }
  for (const res of site.reservations) {
    steps.push({ atSeconds: res.shadowSeconds, deltaCentiW: res.powerCentiW }, { atSeconds: res.endSeconds, deltaCentiW: -res.powerCentiW });
  }
  return steps;
}

/** partitionReleases lists when a partition's GPUs come back: running jobs at start + walltime limit, down nodes at repair. */
export function partitionReleases(input: CycleInput, running: readonly CycleRunningJob[], partition: number): Release[] {
  const releases: Release[] = [];
  for (const r of running) {
    if (r.partition !== partition) continue;
    releases.push({
      atSeconds: r.startTimeSeconds + r.walltimeLimitSeconds,
      nodeIndices: r.nodeIndices,
      gpusPerNode: r.gpus / r.nodeIndices.length,
      repair: false,
    });
  }
  const gpusPerNode = input.partitions[partition]?.gpusPerNode ?? 0;
  input.nodes.forEach((n, i) => {
    if (n.partition === partition && n.down && n.repairAtSeconds !== null) {
      releases.push({ atSeconds: n.repairAtSeconds, nodeIndices: [i], gpusPerNode, repair: true });
    }
  });
  return releases;
}
