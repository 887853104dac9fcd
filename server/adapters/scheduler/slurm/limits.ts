// Budgets in Slurm too (defence in depth): each project is a Slurm account, and the portal's service user
// (and, where jobs run as their people, each member) gets one association per account and partition with
// GrpTRESMins=gres/gpu=<GPU-minutes>, so a job submitted around the portal cannot overspend either. Each
// member's association carries the whole budget: slurmrestd 22.05 sets an account association's own
// limit when it creates it but ignores later changes, so the sum over members is the portal's to keep. Slurm holds such a job (AssocGrpGRESMinutes).
//
// The REST writes that work on Slurm 22.05 (docs/slurm.md, "Budgets over REST"), as admin:
// 1. POST /accounts creates the account (without any association);
// 2. POST /associations {cluster, account, parent_account: "root"} creates its association in the
//    cluster; it answers 200 with "Missing required field 'user'" and works all the same;
// 3. POST /associations {cluster, account, user, partition, max.tres.group.minutes} sets the limit —
//    ONLY that field: the documented max.tres.total crashed slurmrestd; account-level limits are ignored;
// 4. read back, since answers can claim an error on success (2) or nothing on failure.
import type { BudgetHold } from '~/server/core/scheduler/port';
import type { SlurmAssociationInput, SlurmClient } from './client';
import { SlurmError, type SlurmErrorEntry } from './errors';
import { gpusFromGres, gpusFromTres, jobState, timeLimitSeconds } from './mapping';
import type { CtldJob, SlurmAssociation } from './schemas';

/** A budget as Slurm is given it: partition is Slurm's partition name. */
export interface SlurmBudget {
  account: string;
  partition: string;
  gpuMinutes: number;
  /**
   * The POSIX users who run jobs in the account (its project's members), when jobs run as their people:
   * each gets an association with the limit, and any other user's association in the account is removed.
   */
  users?: string[];
  /** The account the project's account is made under (its tenant's: tenant → project), else root. */
  parent?: string;
}

/** A budget as read back from slurmdbd after the sync. */
export interface AppliedSlurmBudget {
  account: string;
  partition: string;
  /** The GrpTRESMins gres/gpu slurmdbd holds now (null: no limit, i.e. the write did not take). */
  gpuMinutes: number | null;
  /** Slurm's usage counter for the limit is kept by slurmctld, not slurmdbd: null here. */
  usedGpuMinutes: number | null;
}

// Slurm stores account names in lower case; names go into URLs and sacctmgr output.
const NAME_RE = /^[a-z0-9][a-z0-9_.-]*$/;

/** The step-2 answer that comes with a successful account association (no user is the point of it). */
function isMissingUserField(entry: SlurmErrorEntry): boolean {
  return entry.code === null && entry.source === '_parser_run' && /Missing required field 'user'/.test(entry.description ?? entry.error ?? '');
}

/** groupGpuMinutes reads GrpTRESMins gres/gpu from an association (null when unset). */
export function groupGpuMinutes(association: SlurmAssociation): number | null {
  const entry = association.max?.tres?.group?.minutes?.find((t) => t.type === 'gres' && t.name === 'gpu');
  return typeof entry?.count === 'number' && entry.count >= 0 ? entry.count : null;
}

/** limitAssociation is the exact body of step 3: the service user's association with only the GPU-minute limit. */
export function limitAssociation(cluster: string, user: string, budget: SlurmBudget): SlurmAssociationInput {
  return {
    cluster,
    account: budget.account,
    user,
    partition: budget.partition,
    max: { tres: { group: { minutes: [{ type: 'gres', name: 'gpu', count: budget.gpuMinutes }] } } },
  };
}

function checkBudgets(budgets: SlurmBudget[]): void {
  const seen = new Set<string>();
  for (const b of budgets) {
    if (!NAME_RE.test(b.account)) throw new SlurmError('permanent', `syncBudgets: not a Slurm account name (lower case, no spaces): ${JSON.stringify(b.account)}`);
    if (!NAME_RE.test(b.partition)) throw new SlurmError('permanent', `syncBudgets: not a Slurm partition name: ${JSON.stringify(b.partition)}`);
    if (!Number.isInteger(b.gpuMinutes) || b.gpuMinutes < 0) throw new SlurmError('permanent', `syncBudgets: GPU-minutes must be a whole number ≥ 0, got ${b.gpuMinutes}`);
    const key = `${b.account}/${b.partition}`;
    if (seen.has(key)) throw new SlurmError('permanent', `syncBudgets: ${key} is given twice`);
    for (const user of b.users ?? []) if (!NAME_RE.test(user)) throw new SlurmError('permanent', `syncBudgets: not a Unix user name: ${JSON.stringify(user)}`);
    if (b.parent !== undefined && !NAME_RE.test(b.parent)) throw new SlurmError('permanent', `syncBudgets: not a Slurm account name: ${JSON.stringify(b.parent)}`);
    seen.add(key);
  }
}

/**
 * syncBudgetsRest applies the budgets as GrpTRESMins=gres/gpu on `serviceUser`'s association per account
 * and partition, creating missing accounts and associations, then reads them back. Idempotent: a re-run
 * with the same budgets writes the same values. Needs an admin client (AdminLevel=Administrator).
 */
export async function syncBudgetsRest(admin: SlurmClient, cluster: string, serviceUser: string, budgets: SlurmBudget[]): Promise<AppliedSlurmBudget[]> {
  checkBudgets(budgets);
  if (budgets.length === 0) return [];
  const accounts = [...new Set(budgets.map((b) => b.account))];

  const parentOf = new Map(budgets.map((b) => [b.account, b.parent ?? 'root']));
  const parents = [...new Set(parentOf.values())].filter((p) => p !== 'root');
  const known = new Set((await admin.accounts()).map((a) => a.name.toLowerCase()));
  const missing = [...parents.filter((p) => !known.has(p)).map((name) => ({ name, description: `portal tenant ${name}` })), ...accounts.filter((a) => !known.has(a)).map((name) => ({ name, description: `portal project ${name}` }))];
  if (missing.length > 0) await admin.postAccounts(missing.map((a) => ({ ...a, organization: 'portal' })));

  // An account's own association in the cluster (a tenant's under root, a project's under its tenant's)
  // must exist before a child's or a user's can. One made before there were tenant accounts stays under
  // root: slurmrestd 22.05 does not move an association.
  for (const [account, parent] of [...parents.map((p) => [p, 'root'] as const), ...accounts.map((a) => [a, parentOf.get(a)!] as const)]) {
    const rows = await admin.associations({ account, cluster });
    if (rows.some((r) => !r.user && !r.partition)) continue;
    await admin.postAssociations([{ cluster, account, parent_account: parent }], { accept: isMissingUserField });
  }

  await admin.postAssociations(budgets.flatMap((b) => [serviceUser, ...(b.users ?? [])].map((user) => limitAssociation(cluster, user, b))));

  // People who left a project lose their association in its account (they can no longer submit there).
  for (const account of accounts) {
    const own = budgets.filter((b) => b.account === account);
    if (own.every((b) => b.users === undefined)) continue;
    const wanted = new Set([serviceUser, ...own.flatMap((b) => b.users ?? [])]);
    const rows = await admin.associations({ account, cluster });
    for (const row of rows) {
      if (row.user && !wanted.has(row.user)) await admin.deleteAssociation({ cluster, account, user: row.user, ...(row.partition ? { partition: row.partition } : {}) });
    }
  }

  const applied: AppliedSlurmBudget[] = [];
  for (const account of accounts) {
    const rows = await admin.associations({ account, cluster, user: serviceUser });
    for (const b of budgets.filter((x) => x.account === account)) {
      const row = rows.find((r) => r.user === serviceUser && r.partition === b.partition);
      applied.push({ account, partition: b.partition, gpuMinutes: row ? groupGpuMinutes(row) : null, usedGpuMinutes: null });
    }
  }
  return applied;
}

/** Pending reasons of a job Slurm holds on a GPU-minute (or other TRES-minute) group limit. */
export const BUDGET_HOLD_REASON = /Grp(GRES|TRES)Minutes/;

/** The portal job id a job was submitted for, from its comment `portal:<id>` (mapping.submitBody). */
export function portalJobIdFromComment(comment: string | null | undefined): string | null {
  const m = /^portal:(.+)$/.exec(comment ?? '');
  return m ? m[1]! : null;
}

/**
 * budgetHoldsFrom picks the jobs slurmctld holds on a budget limit (pending, reason *GrpGRESMinutes or
 * *GrpTRESMinutes) from GET /jobs. `partitionOf` maps Slurm's partition to the portal's resource class
 * (null: keep Slurm's name).
 */
export function budgetHoldsFrom(jobs: readonly CtldJob[], partitionOf: (slurmPartition: string) => string | null = () => null): BudgetHold[] {
  return jobs
    .filter((job) => jobState(job.job_state).state === 'PENDING' && BUDGET_HOLD_REASON.test(job.state_reason ?? ''))
    .map((job) => {
      const partition = job.partition ?? '';
      return {
        schedulerJobId: String(job.job_id),
        portalJobId: portalJobIdFromComment(job.comment),
        account: job.account ?? '',
        partition: partitionOf(partition) ?? partition,
        reason: job.state_reason!,
        // A pending job has nothing allocated yet: what it asks for.
        gpus: gpusFromTres(job.tres_req_str) || gpusFromGres(job.tres_per_node) * Math.max(1, job.node_count ?? 1),
        timeLimitSeconds: timeLimitSeconds(job.time_limit) ?? 0,
        submittedAt: typeof job.submit_time === 'number' && job.submit_time > 0 ? new Date(job.submit_time * 1000) : null,
      };
    });
}

/** An account's own limit, over all its partitions and members: GrpTRESMins=gres/gpu on the account's association. */
export interface AccountLimit {
  account: string;
  gpuMinutes: number;
}

/**
 * accountLimits sums each account's budgets over its partitions: the limit on the account's own
 * association, which binds every member together (the per-partition limits sit on each member's).
 */
export function accountLimits(budgets: readonly SlurmBudget[]): AccountLimit[] {
  const sums = new Map<string, number>();
  for (const b of budgets) sums.set(b.account, (sums.get(b.account) ?? 0) + b.gpuMinutes);
  return [...sums].map(([account, gpuMinutes]) => ({ account, gpuMinutes }));
}

/** A command runner: the arguments to sacctmgr, its stdout back (tests pass a fake). */
export type SacctmgrRunner = (args: string[]) => Promise<string>;

/**
 * setAccountLimitsSacctmgr writes each account's own GrpTRESMins=gres/gpu with sacctmgr (slurmrestd 22.05
 * sets an account association's limit only when it creates it) and reads them back: an account whose
 * limit did not take throws, so the sync is recorded as failed with the reason.
 */
export async function setAccountLimitsSacctmgr(sacctmgr: SacctmgrRunner, cluster: string, limits: readonly AccountLimit[]): Promise<void> {
  for (const l of limits) {
    if (!NAME_RE.test(l.account) || !Number.isInteger(l.gpuMinutes) || l.gpuMinutes < 0) throw new SlurmError('permanent', `account limit: bad account or GPU-minutes: ${JSON.stringify(l)}`);
    await sacctmgr(['-i', 'modify', 'account', 'where', `name=${l.account}`, `cluster=${cluster}`, 'set', `GrpTRESMins=gres/gpu=${l.gpuMinutes}`]);
  }
  for (const l of limits) {
    const out = await sacctmgr(['-n', '-P', 'show', 'assoc', 'where', `account=${l.account}`, `cluster=${cluster}`, 'format=User,Partition,GrpTRESMins']);
    const own = out.split('\n').find((line) => line.startsWith('||'));
    const read = own ? Number(/gres\/gpu=(\d+)/.exec(own)?.[1] ?? NaN) : NaN;
    if (read !== l.gpuMinutes) throw new SlurmError('transient', `account limit of ${l.account}: sacctmgr shows ${Number.isNaN(read) ? 'none' : read} GPU-minutes, not ${l.gpuMinutes}`);
  }
}
