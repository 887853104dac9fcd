// End-of-allocation reports (issue #32 part 6). An approved request for a new or renewed allocation owes
// a report once its period has ended (server/core/reports.ts): its project's PI or a manager files what it
// produced — a summary, publications by DOI, data sets — and may file again (the audit keeps both). The
// worker asks the project's leads once when the period ends (`requestDueReports`); staff see the reports
// missing; a request whose project's PI owes one elsewhere is flagged to its reviewers (`owedByPisOf`).
import { and, asc, desc, eq, inArray, isNull, lte, ne, sql } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { allocationReports, allocations, applications, organisations, projectMembers, projects, users } from '~/db/schema';
import { checkReport, reportOwed } from '~/server/core/reports';
import { AppError } from '~/server/errors';
import type { TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { notify } from '~/server/services/mail/notifications';
import { projectAccess, projectLeads, requireProjectManager } from '~/server/services/tenants/projects';
import { inTransaction } from '~/server/services/transaction';

export interface ReportInput {
  applicationId: string;
  summary: string;
  publications: string[];
  datasets: string[];
}

/** fileReport files (or files again) the report of one of the tenant's approved requests. */
export async function fileReport(db: Db, actor: TenantActor, input: ReportInput, now: Date) {
  const [app] = await db
    .select({ id: applications.id, projectId: applications.projectId, status: applications.status, kind: applications.kind, periodEnd: applications.periodEnd })
    .from(applications)
    .where(and(eq(applications.id, input.applicationId), eq(applications.orgId, actor.org.id)));
  if (!app) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'applicationId');
  requireProjectManager(await projectAccess(db, actor, app.projectId));
  if (app.status !== 'approved' || app.kind === 'top_up') throw new AppError('PRECONDITION_FAILED', 'report.notReportable', {}, 'applicationId');
  const checked = checkReport(input);
  if (checked.problem) throw new AppError('BAD_REQUEST', checked.problem.key as never, checked.problem.params ?? {}, checked.problem.field);
  const values = { summary: input.summary.trim(), publications: checked.publications, datasets: checked.datasets };
  return inTransaction(db, async (tx) => {
    // The request's row locked, so two leads filing at once write one after the other (the audit sees both).
    await tx.select({ id: applications.id }).from(applications).where(eq(applications.id, app.id)).for('no key update');
    const [before] = await tx.select().from(allocationReports).where(eq(allocationReports.applicationId, app.id));
    const [row] = await tx
      .insert(allocationReports)
      .values({ applicationId: app.id, projectId: app.projectId, orgId: actor.org.id, ...values, filedBy: actor.userId, filedAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: allocationReports.applicationId, set: { ...values, filedBy: actor.userId, updatedAt: now } })
      .returning();
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: actor.org.id,
      action: 'report.filed',
      targetType: 'application',
      targetId: app.id,
      data: { publications: values.publications, datasets: values.datasets, summaryChars: values.summary.length, replaced: before ? { publications: before.publications, datasets: before.datasets, summaryChars: before.summary.length, updatedAt: before.updatedAt.toISOString() } : null },
    });
    return row!;
  });
}

/** reportOf is a request's report with who filed it, or null. */
export async function reportOf(db: DbOrTx, applicationId: string) {
  const [row] = await db
    .select({ summary: allocationReports.summary, publications: allocationReports.publications, datasets: allocationReports.datasets, filedAt: allocationReports.filedAt, updatedAt: allocationReports.updatedAt, filedByName: users.name })
    .from(allocationReports)
    .innerJoin(users, eq(users.id, allocationReports.filedBy))
    .where(eq(allocationReports.applicationId, applicationId));
  return row ?? null;
}

/** What a request's allocations used of what they were granted, in their unit (GPU-seconds), for its report. */
export async function usedOf(db: DbOrTx, applicationId: string) {
  const [row] = await db
    .select({ granted: sql<number>`coalesce(sum(${allocations.granted}), 0)`.mapWith(Number), charged: sql<number>`coalesce(sum(${allocations.charged}), 0)`.mapWith(Number) })
    .from(allocations)
    .where(eq(allocations.applicationId, applicationId));
  return row ?? { granted: 0, charged: 0 };
}

const owedWhere = (today: string) => and(eq(applications.status, 'approved'), ne(applications.kind, 'top_up'), lte(applications.periodEnd, today), isNull(allocationReports.id));

/** missingReports lists, for staff, the requests whose period ended without a report, the longest overdue first. */
export async function missingReports(db: DbOrTx, today: string) {
  const rows = await db
    .select({ applicationId: applications.id, projectId: projects.id, projectTitle: projects.title, orgName: organisations.name, periodEnd: applications.periodEnd, requestedAt: applications.reportRequestedAt })
    .from(applications)
    .innerJoin(projects, eq(projects.id, applications.projectId))
    .innerJoin(organisations, eq(organisations.id, applications.orgId))
    .leftJoin(allocationReports, eq(allocationReports.applicationId, applications.id))
    .where(owedWhere(today))
    .orderBy(asc(applications.periodEnd), asc(applications.id))
    .limit(500);
  const pis = await pisOf(db, rows.map((r) => r.projectId));
  return rows.map(({ projectId, ...r }) => ({ ...r, pis: pis.get(projectId) ?? [] }));
}

/** filedReports lists the latest reports for staff. */
export async function filedReports(db: DbOrTx, limit = 100) {
  return db
    .select({ applicationId: allocationReports.applicationId, projectTitle: projects.title, orgName: organisations.name, filedAt: allocationReports.filedAt, updatedAt: allocationReports.updatedAt, publications: allocationReports.publications, datasets: allocationReports.datasets, filedByName: users.name })
    .from(allocationReports)
    .innerJoin(projects, eq(projects.id, allocationReports.projectId))
    .innerJoin(organisations, eq(organisations.id, allocationReports.orgId))
    .innerJoin(users, eq(users.id, allocationReports.filedBy))
    .orderBy(desc(allocationReports.updatedAt))
    .limit(limit);
}

async function pisOf(db: DbOrTx, projectIds: string[]) {
  const out = new Map<string, { userId: string; name: string }[]>();
  if (projectIds.length === 0) return out;
  const rows = await db
    .select({ projectId: projectMembers.projectId, userId: projectMembers.userId, name: users.name })
    .from(projectMembers)
    .innerJoin(users, eq(users.id, projectMembers.userId))
    .where(and(inArray(projectMembers.projectId, [...new Set(projectIds)]), eq(projectMembers.role, 'pi')));
  for (const r of rows) out.set(r.projectId, [...(out.get(r.projectId) ?? []), { userId: r.userId, name: r.name }]);
  return out;
}

/**
 * owedByPisOf tells, for each of the given requests, the reports its project's PI owes on other requests
 * (of any project they lead as PI): the flag reviewers see on a new request.
 */
export async function owedByPisOf(db: DbOrTx, requests: { id: string; projectId: string }[], today: string) {
  const out = new Map<string, { applicationId: string; projectTitle: string; periodEnd: string }[]>();
  if (requests.length === 0) return out;
  const pis = await pisOf(db, requests.map((r) => r.projectId));
  const people = [...new Set([...pis.values()].flat().map((p) => p.userId))];
  if (people.length === 0) return out;
  const owed = await db
    .select({ applicationId: applications.id, projectTitle: projects.title, periodEnd: applications.periodEnd, pi: projectMembers.userId })
    .from(applications)
    .innerJoin(projects, eq(projects.id, applications.projectId))
    .innerJoin(projectMembers, and(eq(projectMembers.projectId, applications.projectId), eq(projectMembers.role, 'pi')))
    .leftJoin(allocationReports, eq(allocationReports.applicationId, applications.id))
    .where(and(owedWhere(today), inArray(projectMembers.userId, people)))
    .orderBy(asc(applications.periodEnd));
  for (const r of requests) {
    const mine = new Set((pis.get(r.projectId) ?? []).map((p) => p.userId));
    const list = owed.filter((o) => mine.has(o.pi) && o.applicationId !== r.id);
    const unique = [...new Map(list.map((o) => [o.applicationId, { applicationId: o.applicationId, projectTitle: o.projectTitle, periodEnd: o.periodEnd }])).values()];
    if (unique.length) out.set(r.id, unique);
  }
  return out;
}

/** A request's report state for its applicants: whether one is owed now, and the report if filed. */
export async function reportStateOf(db: DbOrTx, app: { id: string; status: string; kind: string; periodEnd: string }, today: string) {
  if (app.status !== 'approved' || app.kind === 'top_up') return null;
  const [report, used] = await Promise.all([reportOf(db, app.id), usedOf(db, app.id)]);
  return { owed: reportOwed(app, today) && !report, dueFrom: app.periodEnd, report, used };
}

/**
 * requestDueReports asks the leads of each request whose period has ended (and has no report) for its
 * report, once per request: the request's row is claimed by setting `report_requested_at` in the same
 * transaction as the notice and mail, so a second worker finds nothing to do. A batch at a time.
 */
export async function requestDueReports(db: Db, now: Date, batch = 200): Promise<number> {
  const today = now.toISOString().slice(0, 10);
  return inTransaction(db, async (tx) => {
    const due = await tx
      .select({ id: applications.id, projectId: applications.projectId, orgId: applications.orgId })
      .from(applications)
      .leftJoin(allocationReports, eq(allocationReports.applicationId, applications.id))
      .where(and(owedWhere(today), isNull(applications.reportRequestedAt)))
      .orderBy(asc(applications.periodEnd), asc(applications.id))
      .limit(batch)
      .for('update', { of: applications, skipLocked: true });
    if (due.length === 0) return 0;
    await tx.update(applications).set({ reportRequestedAt: now }).where(inArray(applications.id, due.map((d) => d.id)));
    const titles = new Map((await tx.select({ id: projects.id, title: projects.title }).from(projects).where(inArray(projects.id, [...new Set(due.map((d) => d.projectId))]))).map((p) => [p.id, p.title]));
    for (const d of due) {
      const leads = await projectLeads(tx, d.projectId);
      await notify(tx, leads, 'notice.reportDue', { project: titles.get(d.projectId) ?? '' }, `/applications/${d.id}#report`, { orgId: d.orgId, dedupeKey: `report-due:${d.id}` });
    }
    return due.length;
  });
}
