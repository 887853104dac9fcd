// Idle shutdown of interactive sessions (issue #28): a session whose proxy carried no traffic for its
// idle time-out is stopped as a service is (it ends COMPLETED, charged for the time it ran). The time
// is the cluster's: on the simulated cluster, whose clock runs `clockSpeed` times faster than the wall,
// a 30-minute time-out passes in 30 s, as a 1-hour job runs in a minute.
import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { jobEvents, jobs } from '~/db/schema';
import type { SchedulerPort } from '~/server/core/scheduler/port';

/**
 * endIdleSessions asks the scheduler to stop each running session idle for its time-out (the round's
 * next step forwards the request): one UPDATE, and an event on each job saying why. Returns their ids.
 */
export async function endIdleSessions(db: Db, scheduler: Pick<SchedulerPort, 'clockSpeed'>, now: Date, ofSites?: SQL): Promise<string[]> {
  const speed = scheduler.clockSpeed ?? 1;
  // Seen last: the proxy's last traffic, else the start (a session nobody opened is idle from its start).
  const idleSince = sql`coalesce(${jobs.sessionSeenAt}, ${jobs.startedAt})`;
  const ended = await db
    .update(jobs)
    .set({ cancelRequestedAt: now, updatedAt: now })
    .where(
      and(
        eq(jobs.kind, 'interactive'),
        eq(jobs.state, 'RUNNING'),
        isNull(jobs.cancelRequestedAt),
        isNull(jobs.settledAt),
        sql`${idleSince} + make_interval(secs => ${jobs.idleTimeoutSeconds}::float8 / ${speed}) <= ${now.toISOString()}::timestamptz`,
        ofSites,
      ),
    )
    .returning({ id: jobs.id, idleTimeoutSeconds: jobs.idleTimeoutSeconds });
  if (ended.length) {
    await db.insert(jobEvents).values(ended.map((j) => ({ jobId: j.id, at: now, state: 'RUNNING' as const, message: 'job.event.sessionIdle' as const, data: { minutes: Math.round((j.idleTimeoutSeconds ?? 0) / 60) } })));
  }
  return ended.map((j) => j.id);
}
