// Reminders that allocations end soon: once per UTC day the worker finds the allocations at 30, 14, 7
// and 0 days before their last day (server/core/mail/reminders.ts) and tells each person concerned
// once, listing all of theirs: a bell notice and, if they want it, one mail. Who hears: the project's
// PI and managers (they run the work) and the tenant's owners (they answer for the budget), while they
// are members of the tenant. Once per day by a claim row (daily_task_runs) written in the same
// transaction as the notices and mails: a second run that day, or a second worker at the same moment
// (it waits for the first's claim and then finds it), does nothing; a run that fails leaves no claim,
// so the next round tries again. The mails' keys (expiry:<user>:<day>) make each once besides.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { allocations, dailyTaskRuns, memberships, projectMembers, projects, resourceClasses } from '~/db/schema';
import { allocationsAtMark, lastUsableDay, markedPeriodEnds, remindersByPerson } from '~/server/core/mail/reminders';
import { localName } from '~/server/catalogue';
import type { MessageKey } from '~/server/i18n';
import { formatDay } from '~/server/i18n/format';
import { mailPeople, notify, portalLink } from './notifications';
import { inTransaction } from '~/server/services/transaction';

const TASK = 'expiry-reminders';

export interface ReminderRun {
  day: string;
  /** False when this day's reminders were sent already (by this or another worker). */
  ran: boolean;
  people: number;
  allocations: number;
}

/** sendExpiryReminders sends the day's expiry reminders, once per UTC day whoever calls it how often. */
export async function sendExpiryReminders(db: Db, now: Date): Promise<ReminderRun> {
  const today = now.toISOString().slice(0, 10);
  return inTransaction(db, async (tx) => {
    const claimed = await tx.insert(dailyTaskRuns).values({ task: TASK, day: today, doneAt: now }).onConflictDoNothing().returning({ day: dailyTaskRuns.day });
    if (claimed.length === 0) return { day: today, ran: false, people: 0, allocations: 0 };
    const candidates = await tx
      .select({
        id: allocations.id,
        orgId: allocations.orgId,
        projectId: allocations.projectId,
        periodStart: allocations.periodStart,
        periodEnd: allocations.periodEnd,
        project: projects.title,
        resourceClass: resourceClasses.name,
        resourceClassDe: resourceClasses.nameDe,
      })
      .from(allocations)
      .innerJoin(projects, eq(projects.id, allocations.projectId))
      .innerJoin(resourceClasses, eq(resourceClasses.id, allocations.resourceClassId))
      .where(and(eq(allocations.status, 'active'), inArray(allocations.periodEnd, markedPeriodEnds(today))));
    const atMark = allocationsAtMark(candidates, today);
    if (atMark.length === 0) return { day: today, ran: true, people: 0, allocations: 0 };
    const projectIds = [...new Set(atMark.map((a) => a.projectId))];
    const orgIds = [...new Set(atMark.map((a) => a.orgId))];
    const [leads, members] = await Promise.all([
      tx
        .select({ projectId: projectMembers.projectId, userId: projectMembers.userId })
        .from(projectMembers)
        .where(and(inArray(projectMembers.projectId, projectIds), inArray(projectMembers.role, ['pi', 'manager']))),
      tx.select({ orgId: memberships.orgId, userId: memberships.userId, role: memberships.role }).from(memberships).where(inArray(memberships.orgId, orgIds)),
    ]);
    const memberOf = new Set(members.map((m) => `${m.orgId}:${m.userId}`));
    const recipientsOf = (a: (typeof atMark)[number]) =>
      [...leads.filter((l) => l.projectId === a.projectId).map((l) => l.userId), ...members.filter((m) => m.orgId === a.orgId && m.role === 'owner').map((m) => m.userId)].filter((u) =>
        memberOf.has(`${a.orgId}:${u}`),
      );
    const byPerson = remindersByPerson(atMark, recipientsOf);
    for (const [userId, list] of byPerson) {
      const soonest = list[0]!;
      await notify(tx, [userId], 'notice.allocationsExpiring', { count: list.length, project: soonest.project, days: soonest.daysLeft }, list.length === 1 ? `/allocations/${soonest.id}` : '/allocations');
    }
    await mailPeople(
      tx,
      'allocation_expiring',
      [...byPerson].map(([userId, list]) => ({
        userId,
        // Several tenants' allocations may be in one mail; it names the tenant only when there is one.
        orgId: new Set(list.map((a) => a.orgId)).size === 1 ? list[0]!.orgId : null,
        dedupeKey: `expiry:${userId}:${today}`,
        content: (reader) => ({
          subject: ['mail.allocationsExpiring.subject', { count: list.length }],
          paragraphs: [
            ['mail.greeting', { name: reader.name }],
            ['mail.allocationsExpiring.intro', { count: list.length }],
            ...list.map((a) => [lineKey(a.daysLeft), { project: a.project, resourceClass: localName(reader.locale, { name: a.resourceClass, nameDe: a.resourceClassDe }), days: a.daysLeft, last: formatDay(reader.locale, lastUsableDay(a.periodEnd)) }] as const),
            ['mail.allocationsExpiring.outro'],
          ],
          action: { label: ['mail.allocationsExpiring.action'], url: portalLink('/allocations') },
        }),
      })),
    );
    return { day: today, ran: true, people: byPerson.size, allocations: atMark.length };
  });
}

function lineKey(daysLeft: number): MessageKey {
  return daysLeft === 0 ? 'mail.allocationsExpiring.lineToday' : 'mail.allocationsExpiring.line';
}
