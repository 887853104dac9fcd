// Reminders to reviewers (issue #32): once per UTC day the worker finds the reviews still open on waiting
// requests whose decision is due within a working day or overdue (the request's decision clock,
// ledger/applications.ts decisionClock) and tells each reviewer once, listing all of theirs: a bell notice
// and, if they want it, one mail. Once per day by a claim row (daily_task_runs) in the same transaction as
// the notices and mails, as the expiry reminders (./reminders.ts); each review's `reminded_at` records it.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { accessModes, applications, callRounds, dailyTaskRuns, projects, reviewAssignments } from '~/db/schema';
import { workingHoursBetween } from '~/server/core/working-time';
import { formatDateTime } from '~/server/i18n/format';
import { workingCalendar } from '~/server/services/calendar';
import { decisionClock } from '~/server/services/ledger/applications';
import { conflictOf, tiesOf } from '~/server/services/ledger/conflicts';
import { inTransaction } from '~/server/services/transaction';
import { mailPeople, notify, portalLink } from './notifications';

const TASK = 'review-reminders';

/** sendReviewReminders sends the day's reminders to reviewers, once per UTC day whoever calls it how often. */
export async function sendReviewReminders(db: Db, now: Date): Promise<{ day: string; ran: boolean; reviewers: number; reviews: number }> {
  const today = now.toISOString().slice(0, 10);
  return inTransaction(db, async (tx) => {
    const claimed = await tx.insert(dailyTaskRuns).values({ task: TASK, day: today, doneAt: now }).onConflictDoNothing().returning({ day: dailyTaskRuns.day });
    if (claimed.length === 0) return { day: today, ran: false, reviewers: 0, reviews: 0 };
    const open = await tx
      .select({
        id: reviewAssignments.id,
        reviewerUserId: reviewAssignments.reviewerUserId,
        applicationId: applications.id,
        orgId: applications.orgId,
        projectId: applications.projectId,
        project: projects.title,
        submittedAt: applications.submittedAt,
        reviewRoute: applications.reviewRoute,
        reviewPath: accessModes.reviewPath,
        targetDays: accessModes.targetDecisionWorkingDays,
        roundCutoffAt: callRounds.cutoffAt,
      })
      .from(reviewAssignments)
      .innerJoin(applications, eq(applications.id, reviewAssignments.applicationId))
      .innerJoin(projects, eq(projects.id, applications.projectId))
      .innerJoin(accessModes, eq(accessModes.id, applications.accessModeId))
      .leftJoin(callRounds, eq(callRounds.id, applications.roundId))
      .where(and(eq(reviewAssignments.status, 'assigned'), eq(applications.status, 'submitted')));
    const calendar = workingCalendar();
    const dayHours = calendar.endHour - calendar.startHour;
    // Due within one working day (or overdue), soonest first.
    const dueSoon = open
      .map((r) => ({ ...r, dueAt: decisionClock(calendar, r, now).dueAt }))
      .filter((r) => r.dueAt.getTime() <= now.getTime() || workingHoursBetween(calendar, now, r.dueAt) <= dayHours)
      .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
    // Never a reminder of a review its reviewer may no longer open (they joined the applicant's organisation or project since).
    const ties = new Map<string, Awaited<ReturnType<typeof tiesOf>>>();
    for (const userId of new Set(dueSoon.map((d) => d.reviewerUserId))) ties.set(userId, await tiesOf(tx, userId, dueSoon.filter((d) => d.reviewerUserId === userId).map((d) => d.applicationId)));
    const due = dueSoon.filter((d) => !conflictOf(ties.get(d.reviewerUserId)!, { id: d.applicationId, orgId: d.orgId, projectId: d.projectId }).excluded);
    if (due.length === 0) return { day: today, ran: true, reviewers: 0, reviews: 0 };
    await tx.update(reviewAssignments).set({ remindedAt: now }).where(inArray(reviewAssignments.id, due.map((d) => d.id)));
    const byReviewer = new Map<string, typeof due>();
    for (const d of due) byReviewer.set(d.reviewerUserId, [...(byReviewer.get(d.reviewerUserId) ?? []), d]);
    for (const [userId, list] of byReviewer) {
      const first = list[0]!;
      await notify(tx, [userId], 'notice.reviewsDue', { count: list.length, project: first.project }, list.length === 1 ? `/staff/applications/${first.applicationId}` : '/staff/applications');
    }
    await mailPeople(
      tx,
      'review_reminder',
      [...byReviewer].map(([userId, list]) => ({
        userId,
        orgId: null,
        dedupeKey: `review-reminder:${userId}:${today}`,
        content: (reader) => ({
          subject: ['mail.reviewsDue.subject', { count: list.length }],
          paragraphs: [
            ['mail.greeting', { name: reader.name }],
            ['mail.reviewsDue.intro', { count: list.length }],
            ...list.map((r) => [r.dueAt.getTime() <= now.getTime() ? 'mail.reviewsDue.lineOverdue' : 'mail.reviewsDue.line', { project: r.project, due: formatDateTime(reader.locale, r.dueAt, calendar.timeZone) }] as const),
          ],
          action: { label: ['mail.reviewsDue.action'], url: portalLink('/staff/applications') },
        }),
      })),
    );
    return { day: today, ran: true, reviewers: byReviewer.size, reviews: due.length };
  });
}
