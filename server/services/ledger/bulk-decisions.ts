// Deciding a round's applications from its ranking in one action (issue #32): each decision in its own
// transaction, as one decided alone would be. The ranking is in ./reviews.ts.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { applicationLines, applications } from '~/db/schema';
import { AppError } from '~/server/errors';
import type { MessageKey } from '~/server/i18n';
import { isStaff, type Actor } from '~/server/services/actor';
import { syncBudgetsAfterCommit, type BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';
import { decideApplication } from './applications';

export type BulkOutcome = 'approved' | 'rejected' | 'changes_requested';

/**
 * decideInBulk decides some of a round's applications the same way (approve as requested, reject, send
 * back), each in its own transaction as one decision would be (allocations and ledger grants, audited and
 * mailed), so one that cannot be decided (decided meanwhile, a conflict, not in this round) leaves the
 * others decided; it answers each one's result. The scheduler hears the new budgets once at the end.
 */
export async function decideInBulk(db: Db, staff: Actor, input: { roundId: string; applicationIds: string[]; outcome: BulkOutcome; comment: string }, now: Date, budgets?: BudgetSyncStep) {
  if (!isStaff(staff)) throw new AppError('FORBIDDEN', 'error.staffOnly');
  const ids = [...new Set(input.applicationIds)];
  const inRound = ids.length ? await db.select({ id: applications.id, projectId: applications.projectId }).from(applications).where(and(inArray(applications.id, ids), eq(applications.roundId, input.roundId))) : [];
  const results: { applicationId: string; status: BulkOutcome | null; error: { key: MessageKey; params: Record<string, string | number> } | null }[] = [];
  const projectIds: string[] = [];
  for (const id of ids) {
    const app = inRound.find((a) => a.id === id);
    if (!app) {
      results.push({ applicationId: id, status: null, error: { key: 'error.notFound', params: {} } });
      continue;
    }
    try {
      const requested = input.outcome === 'approved' ? await db.select({ resourceClassId: applicationLines.resourceClassId, gpuSeconds: applicationLines.requestedGpuSeconds, storageGb: applicationLines.requestedStorageGb }).from(applicationLines).where(eq(applicationLines.applicationId, id)) : [];
      const decided = await decideApplication(db, staff, id, { outcome: input.outcome, grantedLines: requested, comment: input.comment }, now);
      if (decided.allocationIds.length) projectIds.push(app.projectId);
      results.push({ applicationId: id, status: decided.status, error: null });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      results.push({ applicationId: id, status: null, error: { key: error.key, params: error.params } });
    }
  }
  await syncBudgetsAfterCommit(db, budgets, projectIds);
  return results;
}
