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
 *        3a. partition time limit  → PartitionTimeLimit (skipped);
 *        3b. account limits         → QOSMaxGRESPerUser / AssocGrpGRESMinutes (skipped);
 *        3c. partition still open   → start if it fits now; otherwise the
 *            partition is blocked, the job waits for Resources and (EASY)
 *            gets a reservation;
 *        3d. partition blocked      → EASY: backfill if it keeps the
 *            reservation; otherwise (and always under FIFO) wait for Priority.
 *   4. Emit      — starts and pending reasons.
 */
import { fairShareFactor } from './fairshare';
import { limitReason } from './limits';
import { mergedQueue, sortedQueue, type QueuedJob } from './order';
import { placeJob } from './placement';
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
}

/** A pending job as the cycle sees it. */
export interface CyclePendingJob {
  id: string;
  seq: number;
  submitTimeSeconds: number;
  partition: number;
  user: string;
  account: string;
  gpus: number;
  nodes: number;
  walltimeLimitSeconds: number;
}

/** One partition's pending jobs of one account, in arrival order (submit time, then seq); read lazily. */
export interface CycleQueue {
  partition: number;
  account: string;
  jobs: Iterable<CyclePendingJob>;
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
    // 3c.
    if (!gate.blocked) {
      const placement = placeJob(free, nodesOfPartition, job.nodes, perNode);
      if (placement) {
        start(job, placement, perNode);
        continue;
      }
      gate.blocked = true;
      if (policy.backfill === 'easy') {
        gate.head = { partitionNodes: nodesOfPartition, nodeCount: job.nodes, gpusPerNode: perNode };
        gate.reservation = easyReservation(free, gate.head, partitionReleases(input, running, job.partition), now);
      }
      wait('Resources');
      continue;
    }
    // 3d.
    const placement = policy.backfill === 'easy' ? placeJob(free, nodesOfPartition, job.nodes, perNode) : null;
    if (placement) {
      if (!gate.reservation || !gate.head) {
        start(job, placement, perNode);
        continue;
      }
      const after = backfillKeepsReservation(gate.reservation, gate.head, {
        nodeIndices: placement,
        gpusPerNode: perNode,
        estimatedEndSeconds: now + job.walltimeLimitSeconds,
      });
      if (after) {
        gate.reservation = { shadowSeconds: gate.reservation.shadowSeconds, freeAtShadow: after };
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
