// Interactive sessions (issue #28): a Jupyter notebook (or another app of the catalogue) started as a
// batch job on one GPU node and opened in the browser through the portal's proxy at /sessions/<id>/.
// A session is a job of kind `interactive`: admitted, reserved, charged and reported like any job; its
// command is the session launcher (bin/portal-session), which writes the app's address and secret into
// the job's folder for the proxy. Idle shutdown: ./idle.ts; the proxy and its wall: ./README.md.
import fs from 'node:fs/promises';
import path from 'node:path';
import { and, desc, eq } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { allocations, jobs } from '~/db/schema';
import { connectionFileIn } from '~/server/core/files/paths';
import { configuredCatalogue, localName, type SessionAppId } from '~/server/catalogue';
import { env } from '~/server/env.js';
import { AppError } from '~/server/errors';
import type { Locale } from '~/server/i18n';
import type { TenantActor } from '~/server/services/actor';
import { jobDirOf, workspaceOf, type SiteRoots } from '~/server/services/files/workspace';
import { submitJob } from '~/server/services/jobs/jobs';
import type { SchedulerStep } from '~/server/services/transaction';

type JobRow = typeof jobs.$inferSelect;

export interface StartSessionInput {
  allocationId: string;
  resourceClassId: string;
  app: SessionAppId;
  gpus: number;
  walltimeSeconds: number;
  idleTimeoutSeconds: number;
  idempotencyKey: string;
}

/** The launcher as the nodes see it (PORTAL_SESSION_LAUNCHER), else the portal's own copy. */
export function sessionLauncher(): string {
  return env().PORTAL_SESSION_LAUNCHER ?? path.resolve(process.cwd(), 'bin/portal-session');
}

/** The apps people can start, named in the reader's language. */
export function sessionApps(locale: Locale) {
  return configuredCatalogue().interactiveApps.map((app) => ({ id: app.id, name: localName(locale, app) }));
}

/**
 * startSession submits a session: one node, the app's launcher as the command, the idle time-out kept
 * with the job. Refusals name the field (an app the centre does not offer: `app`; the rest as any job's).
 */
export async function startSession(db: Db, step: SchedulerStep, actor: TenantActor, input: StartSessionInput, now: Date): Promise<JobRow> {
  if (!configuredCatalogue().interactiveApps.some((app) => app.id === input.app)) throw new AppError('BAD_REQUEST', 'session.unknownApp', { app: input.app }, 'app');
  return submitJob(
    db,
    step,
    actor,
    {
      allocationId: input.allocationId,
      resourceClassId: input.resourceClassId,
      name: `${input.app}-session`,
      kind: 'interactive',
      gpus: input.gpus,
      nodes: 1,
      walltimeSeconds: input.walltimeSeconds,
      image: `portal-session:${input.app}`,
      command: `${sessionLauncher()} ${input.app}`,
      env: {},
      idempotencyKey: input.idempotencyKey,
      session: { app: input.app, idleTimeoutSeconds: input.idleTimeoutSeconds },
    },
    now,
  );
}

/** Where a session's launcher writes its connection file: `<job folder>/.portal-session/connection.json`. */
export function connectionFile(roots: SiteRoots, job: Pick<JobRow, 'id' | 'siteId' | 'projectId'>): string {
  return connectionFileIn(jobDirOf(workspaceOf(roots, job.siteId, job.projectId), job.id));
}

/** connectionReady says whether the session's launcher wrote its connection file (the app answers). */
async function connectionReady(roots: SiteRoots, job: Pick<JobRow, 'id' | 'siteId' | 'projectId'>): Promise<boolean> {
  try {
    const stat = await fs.lstat(connectionFile(roots, job));
    return stat.isFile();
  } catch {
    return false;
  }
}

/** The session's address in the portal. */
export function sessionPath(jobId: string): string {
  return `/sessions/${jobId}/`;
}

/**
 * listSessions lists the person's own sessions, newest first (the last 50): state, app, class, GPUs,
 * times, the idle time-out, and whether it can be opened now (running, its app answering).
 */
export async function listSessions(db: DbOrTx, actor: TenantActor, roots: SiteRoots, locale: Locale, clockSpeed: number, jobId?: string) {
  const rows = await db
    .select({ job: jobs, allocationMaxWalltimeSeconds: allocations.maxWalltimeSeconds })
    .from(jobs)
    .innerJoin(allocations, eq(allocations.id, jobs.allocationId))
    .where(and(eq(jobs.orgId, actor.org.id), eq(jobs.userId, actor.userId), eq(jobs.kind, 'interactive'), jobId ? eq(jobs.id, jobId) : undefined))
    .orderBy(desc(jobs.submittedAt))
    .limit(50);
  const apps = new Map(sessionApps(locale).map((a) => [a.id, a.name]));
  const catalogue = configuredCatalogue().resourceClasses;
  const classes = new Map(catalogue.map((rc) => [rc.id, localName(locale, rc)]));
  const classMax = new Map(catalogue.map((rc) => [rc.id, rc.maxWalltimeSeconds]));
  return Promise.all(
    rows.map(async ({ job, allocationMaxWalltimeSeconds }) => ({
      id: job.id,
      name: job.name,
      app: job.app ?? '',
      appName: apps.get(job.app as SessionAppId) ?? job.app ?? '',
      state: job.state,
      resourceClassId: job.resourceClassId,
      resourceClassName: classes.get(job.resourceClassId) ?? job.resourceClassId,
      gpus: job.gpus,
      submittedAt: job.submittedAt,
      startedAt: job.startedAt,
      endedAt: job.endedAt,
      walltimeSeconds: job.walltimeSeconds,
      // What its time costs its allocation (core jobReservation): the unit and the price it was admitted at.
      unit: job.reservedUnit,
      centsPerGpuHour: job.centsPerGpuHour,
      // When its walltime runs out, by the wall clock (the simulated cluster's clock runs clockSpeed times faster).
      endsAt: job.startedAt ? new Date(job.startedAt.getTime() + Math.round((job.walltimeSeconds * 1000) / clockSpeed)) : null,
      idleTimeoutSeconds: job.idleTimeoutSeconds ?? 0,
      // How much longer it may be made to run (extendSession): up to its class's and its allocation's longest walltime.
      extendableSeconds:
        (job.state === 'PENDING' || job.state === 'RUNNING') && job.cancelRequestedAt === null
          ? Math.max(0, Math.min(classMax.get(job.resourceClassId) ?? job.walltimeSeconds, allocationMaxWalltimeSeconds ?? Number.MAX_SAFE_INTEGER) - job.walltimeSeconds)
          : 0,
      cancelRequested: job.cancelRequestedAt !== null,
      url: sessionPath(job.id),
      ready: job.state === 'RUNNING' && job.cancelRequestedAt === null && (await connectionReady(roots, job)),
    })),
  );
}

/** getSession is one of the person's own sessions as listSessions gives it; another's, or no session: NOT_FOUND. */
export async function getSession(db: DbOrTx, actor: TenantActor, roots: SiteRoots, locale: Locale, clockSpeed: number, jobId: string) {
  const [session] = await listSessions(db, actor, roots, locale, clockSpeed, jobId);
  if (!session) throw new AppError('NOT_FOUND', 'error.notFound', {}, 'jobId');
  return session;
}
