// Conflicts of interest (issue #32): a staff member of the applicant's organisation or on its project is
// excluded from an application automatically, one who declared a conflict too, unless an admin overrode it
// (the latest row of review_conflicts decides). An excluded staff member finds no such application: reading,
// scoring and deciding it answer NOT_FOUND. Rule in server/core/reviews.ts conflictState; the panel in ./reviews.ts.
import { and, eq, inArray } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { memberships, projectMembers, reviewConflicts } from '~/db/schema';
import { conflictState, type ConflictRow } from '~/server/core/reviews';
import { AppError } from '~/server/errors';
import type { Actor } from '~/server/services/actor';

export type AppRef = { id: string; orgId: string; projectId: string };

/** What a staff member's conflicts depend on: their tenants, their projects, their declared and overridden conflicts. */
export interface ViewerTies {
  userId: string;
  orgIds: Set<string>;
  projectIds: Set<string>;
  rows: Map<string, ConflictRow[]>;
}

/** tiesOf loads a staff member's ties once, for as many applications as a page shows. */
export async function tiesOf(db: DbOrTx, userId: string, applicationIds?: readonly string[]): Promise<ViewerTies> {
  const [orgs, projs, rows] = await Promise.all([
    db.select({ orgId: memberships.orgId }).from(memberships).where(eq(memberships.userId, userId)),
    db.select({ projectId: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, userId)),
    db
      .select({ applicationId: reviewConflicts.applicationId, kind: reviewConflicts.kind, seq: reviewConflicts.seq })
      .from(reviewConflicts)
      .where(applicationIds?.length ? and(eq(reviewConflicts.reviewerUserId, userId), inArray(reviewConflicts.applicationId, [...applicationIds])) : eq(reviewConflicts.reviewerUserId, userId)),
  ]);
  const byApp = new Map<string, ConflictRow[]>();
  for (const r of rows) byApp.set(r.applicationId, [...(byApp.get(r.applicationId) ?? []), { kind: r.kind, seq: r.seq }]);
  return { userId, orgIds: new Set(orgs.map((o) => o.orgId)), projectIds: new Set(projs.map((p) => p.projectId)), rows: byApp };
}

/** conflictOf is a staff member's conflict with an application, from their ties. */
export function conflictOf(ties: ViewerTies, app: AppRef) {
  const automatic = ties.orgIds.has(app.orgId) ? 'organisation' : ties.projectIds.has(app.projectId) ? 'project' : null;
  return conflictState(automatic, ties.rows.get(app.id) ?? []);
}

/** requireNotExcluded answers NOT_FOUND to a staff member excluded from an application by a conflict of interest. */
export async function requireNotExcluded(db: DbOrTx, staff: Actor, app: AppRef) {
  if (conflictOf(await tiesOf(db, staff.userId, [app.id]), app).excluded) throw new AppError('NOT_FOUND', 'error.notFound');
}
