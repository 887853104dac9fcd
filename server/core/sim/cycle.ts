/**
 * One scheduling cycle as a pure function over a snapshot (in the spirit of
 * Kueue's scheduler): the engine builds the input, this decides which pending
 * jobs start where and why the others wait, and the engine applies it.
 *
 *   1. State     — the free GPUs, running jobs, quota counters and site draws
 *                  (cycle-state.ts): the engine keeps them across cycles, the
 *                  pure `scheduleCycle` builds them from its snapshot input.
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
 *
 * A cycle costs what it reads of the queue, not the machine's size: placement is an index lookup,
 * a blocked head's shadow time walks its partition's releases in end order, and a backfill check
 * costs the candidate's nodes (reservation.ts).
 */
import { CycleState, userKey, type CycleRunningJob } from './cycle-state';
import { fairShareFactor } from './fairshare';
import { limitReason } from './limits';
import { sortedQueue, walkMergedQueue, type CyclePendingJob, type CycleQueue } from './order';
import { chargePower, powerAllows, powerReservation, type PowerStep, type SitePowerGate } from './power';
import { multifactorPriority } from './priority';
import { easyShadow, ReleaseWalk, type NodeHead, type ShadowReservation } from './reservation';
import type { AccountLimits, Partition, PendingReason, PolicyConfig } from './types';

export type { CycleRunningJob } from './cycle-state';

/** A node as the cycle sees it. */
export interface CycleNode {
  partition: number;
  freeGpus: number;
  down: boolean;
  repairAtSeconds: number | null;
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
  head: NodeHead | null;
  reservation: ShadowReservation | null;
}

/** A capped site's power gate for one cycle. */
interface SiteGate extends SitePowerGate {
  members: number[];
}

/** An account as a cycle's quota check sees it. */
export interface CycleQuotaAccount {
  limits: AccountLimits | null | undefined;
  finishedGpuSeconds: number;
}

/** What one cycle is asked besides the machine's state: the clock, the policy, the queue and the accounts. */
export interface CycleRequest {
  nowSeconds: number;
  policy: PolicyConfig;
  partitions: readonly Partition[];
  /** Every pending job, in any order (the cycle sorts them); ignored when `queues` is given. */
  pending: readonly CyclePendingJob[];
  /** With `policy.queueDepth`: the pending jobs split by partition and account. */
  queues?: readonly CycleQueue[];
  accounts: ReadonlyMap<string, CycleQuotaAccount>;
  /** The fair-share factor of an account (read only under multifactor). */
  fairShare: (account: string) => number;
  /** The site of each partition and each site's cap as IT power (null: no cap); unset when no site has a cap. */
  caps?: { partitionSite: readonly number[]; capCentiW: readonly (number | null)[] };
  /**
   * When set, each job considered is told here — its priority and why it waits (null: it starts, or
   * its partition is unknown) — instead of being listed in the decision's `priorities` and `waits`.
   */
  note?: (job: CyclePendingJob, priority: number, reason: PendingReason | null) => void;
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

/** cycleStateOf builds the state a cycle reads from a snapshot input (copies: the input is not changed). */
export function cycleStateOf(input: CycleInput): CycleState {
  const partitionSite = input.power?.partitionSite ?? input.partitions.map(() => 0);
  const sites = Math.max(1, input.power?.sites.length ?? 0);
  const state = new CycleState(input.partitions, input.nodes.map((n) => n.partition), partitionSite, sites);
  input.nodes.forEach((n, i) => {
    const size = input.partitions[n.partition]?.gpusPerNode ?? 0;
    state.free.allocate(i, size - n.freeGpus);
    if (n.down) state.nodeDown(i, n.repairAtSeconds);
  });
  for (const r of input.running) state.track(r);
  input.power?.sites.forEach((site, i) => {
    if (site) state.siteDrawCentiW[i] = site.drawCentiW;
  });
  return state;
}

/** scheduleCycle runs phases 1–4 over the input and returns the decisions; it does not modify the input. */
export function scheduleCycle(input: CycleInput): CycleDecision {
  const factors = input.policy.order === 'multifactor' ? fairShareFactors(input.accounts) : null;
  const power = input.power;
  return runCycle(cycleStateOf(input), {
    ...input,
    fairShare: (account) => factors?.get(account) ?? 1,
    ...(power ? { caps: { partitionSite: power.partitionSite, capCentiW: power.sites.map((site) => site?.capCentiW ?? null) } } : {}),
  });
}

/** siteGates makes the power gate of every capped site from the state's draws, for one cycle. */
function siteGates(state: CycleState, caps: CycleRequest['caps']): (SiteGate | null)[] {
  if (!caps) return [];
  return caps.capCentiW.map((cap, site) =>
    cap === null
      ? null
      : {
          capCentiW: cap,
          drawCentiW: state.siteDrawCentiW[site] ?? 0,
          reservations: [],
          members: caps.partitionSite.flatMap((s, partition) => (s === site ? [partition] : [])),
        },
  );
}

/**
 * runCycle runs phases 2–4 on the machine's state and starts the jobs it decides on in that state (the
 * engine then applies the decision to its own records).
 */
export function runCycle(state: CycleState, request: CycleRequest): CycleDecision {
  const { nowSeconds: now, policy } = request;

  // Phase 2: order (the fair share is asked once per account queue, only under multifactor).
  const multifactor = policy.order === 'multifactor';
  const priority = multifactorPriority; // read once per cycle (an imported binding is a getter call under tsx's CommonJS)
  const withShare = (job: CyclePendingJob, share: number): number => (multifactor ? priority(now - job.submitTimeSeconds, share, policy) : 0);
  const shareOf = (account: string): number => (multifactor ? request.fairShare(account) : 1);
  const cut = new Set<number>();

  // Phase 3: walk (the merged queue is walked as it is read).
  const walk = new QueueWalk(state, request);
  if (request.queues && policy.queueDepth !== undefined) walkMergedQueue(request.queues, shareOf, withShare, policy, policy.queueDepth, cut, (job, priority) => walk.consider(job, priority));
  else for (const { job, priority } of sortedQueue(request.pending, (job) => withShare(job, shareOf(job.account)), policy, cut)) walk.consider(job, priority);

  // Phase 4: emit.
  const rerun = [...cut].some((partition) => walk.startedIn.has(partition));
  return { starts: walk.starts, waits: walk.waits, priorities: walk.priorities, rerun };
}

/** Phase 3: the walk over the queue in order, job by job, with the partitions' and sites' gates of this cycle. */
class QueueWalk {
  readonly starts: CycleStart[] = [];
  readonly waits: CycleWait[] = [];
  readonly priorities = new Map<string, number>();
  readonly startedIn = new Set<number>();
  private readonly now: number;
  private readonly partitionGates: PartitionGate[];
  private readonly siteGates: (SiteGate | null)[];

  constructor(
    private readonly state: CycleState,
    private readonly request: CycleRequest,
  ) {
    this.now = request.nowSeconds;
    this.partitionGates = request.partitions.map(() => ({ blocked: false, head: null, reservation: null }));
    this.siteGates = siteGates(state, request.caps);
  }

  /** consider decides one pending job: it starts (3c, 3d) or waits, with its reason. */
  consider(job: CyclePendingJob, priority: number): void {
    const partition = this.request.partitions[job.partition];
    const gate = this.partitionGates[job.partition];
    const reason = !partition || !gate ? null : (this.heldBack(job, partition) ?? (gate.blocked ? this.backfill(job, gate) : this.startOrBlock(job, gate, partition)));
    const note = this.request.note;
    if (note) note(job, priority, reason);
    else {
      this.priorities.set(job.id, priority);
      if (reason) this.waits.push({ id: job.id, reason, priority });
    }
  }

  /** heldBack gives the reason a job may not start whatever the free GPUs (3·, 3a, 3b), or null. */
  private heldBack(job: CyclePendingJob, partition: Partition): PendingReason | null {
    if (job.heldBy) return job.heldBy;
    if (job.beginSeconds !== undefined && job.beginSeconds > this.now) return 'BeginTime';
    if (job.walltimeLimitSeconds > partition.maxWalltimeSeconds) return 'PartitionTimeLimit';
    const account = this.request.accounts.get(job.account);
    // Without limits there is nothing to count (limitReason would say null).
    if (!account?.limits) return null;
    return limitReason(
      {
        gpus: job.gpus,
        walltimeLimitSeconds: job.walltimeLimitSeconds,
        userRunningGpus: this.state.userGpus.get(userKey(job.account, job.user)) ?? 0,
        accountCommittedGpuSeconds: account.finishedGpuSeconds + (this.state.committedRunning.get(job.account) ?? 0),
      },
      account.limits,
    );
  }

  /** 3c: the partition is open — start the job if it fits now, else block the partition and (EASY) reserve for it. */
  private startOrBlock(job: CyclePendingJob, gate: PartitionGate, partition: Partition): PendingReason | null {
    const perNode = job.gpus / job.nodes;
    const site = this.siteGateOf(job.partition);
    const jobPower = job.powerCentiW ?? 0;
    const placement = this.state.free.place(job.partition, job.nodes, perNode);
    const powerOk = !site || powerAllows(site, jobPower, this.now + job.walltimeLimitSeconds);
    if (placement && powerOk) {
      this.start(job, placement);
      return null;
    }
    gate.blocked = true;
    if (this.request.policy.backfill === 'easy') {
      gate.head = { partition: job.partition, nodeCount: job.nodes, gpusPerNode: perNode };
      const walk = new ReleaseWalk(this.state.free, gate.head, this.state.runningIn(job.partition), this.state.repairsIn(job.partition), partition.gpusPerNode);
      if (site) {
        const head = {
          drawCentiW: site.drawCentiW,
          capCentiW: site.capCentiW,
          powerCentiW: jobPower,
          walltimeSeconds: job.walltimeLimitSeconds,
          steps: sitePowerSteps(site, this.state, this.request.partitions),
        };
        const reserved = powerReservation(walk, head, this.now);
        gate.reservation = reserved?.gpu ?? null;
        if (reserved) site.reservations.push(reserved.power);
      } else {
        gate.reservation = easyShadow(walk, this.now);
      }
    }
    return placement ? 'PowerCap' : 'Resources';
  }

  /** 3d: the partition is blocked — under EASY start the job if it fits now and keeps the reservation (GPUs and power). */
  private backfill(job: CyclePendingJob, gate: PartitionGate): PendingReason | null {
    if (this.request.policy.backfill !== 'easy') return 'Priority';
    const perNode = job.gpus / job.nodes;
    const placement = this.state.free.place(job.partition, job.nodes, perNode);
    if (!placement) return 'Priority';
    const estimatedEnd = this.now + job.walltimeLimitSeconds;
    if (gate.reservation && gate.head && !gate.reservation.keeps(placement, perNode, estimatedEnd)) return 'Priority';
    const site = this.siteGateOf(job.partition);
    if (site && !powerAllows(site, job.powerCentiW ?? 0, estimatedEnd)) return 'PowerCap';
    gate.reservation?.commit(placement, perNode, estimatedEnd);
    this.start(job, placement);
    return null;
  }

  private start(job: CyclePendingJob, nodeIndices: number[]): void {
    const site = this.siteGateOf(job.partition);
    if (site) chargePower(site, job.powerCentiW ?? 0, this.now + job.walltimeLimitSeconds);
    this.starts.push({ id: job.id, nodeIndices });
    this.startedIn.add(job.partition);
    const { id, partition, user, account, gpus, walltimeLimitSeconds, powerCentiW } = job;
    this.state.start({ id, partition, user, account, gpus, nodeIndices, walltimeLimitSeconds, startTimeSeconds: this.now, powerCentiW });
  }

  private siteGateOf(partition: number): SiteGate | null {
    const caps = this.request.caps;
    return caps ? (this.siteGates[caps.partitionSite[partition] ?? -1] ?? null) : null;
  }
}

/** sitePowerSteps lists how a capped site's draw will change: running jobs of its partitions end, nodes are repaired, reserved heads start and end. */
function sitePowerSteps(site: SiteGate, state: CycleState, partitions: readonly Partition[]): PowerStep[] {
  const steps: PowerStep[] = [];
  for (const partition of site.members) {
    const p = partitions[partition]!;
    for (const repair of state.repairsIn(partition)) steps.push({ atSeconds: repair.atSeconds, deltaCentiW: (p.nodeBasePowerW + p.gpusPerNode * p.gpuIdlePowerW) * 100 });
  }
  for (const partition of site.members) {
    for (const r of state.runningIn(partition)) steps.push({ atSeconds: r.endSeconds, deltaCentiW: -(r.powerCentiW ?? 0) });
  }
  for (const res of site.reservations) {
    steps.push({ atSeconds: res.shadowSeconds, deltaCentiW: res.powerCentiW }, { atSeconds: res.endSeconds, deltaCentiW: -res.powerCentiW });
  }
  return steps;
}
