// Interactive sessions (issue #28): the apps a centre offers, starting one, the person's own sessions.
// A session is a job: its page, output, cancel ("end") and figures are the job's (job.get, job.cancel).
import { z } from 'zod';
import { jobState } from '~/db/schema';
import { afterCommit, rootsOf, router, schedulerOf, tenantProcedure } from '~/server/api/trpc';
import { idempotencyKeyField, resourceClassIdField, uuidField } from '~/server/api/fields';
import { isoDateOut, jobStateOut } from '~/server/api/outputs';
import { SESSION_APP_IDS } from '~/server/catalogue';
import { cancelJob } from '~/server/services/jobs/jobs';
import { extendSession } from '~/server/services/sessions/extend';
import { getSession, listSessions, sessionApps, sessionPath, startSession } from '~/server/services/sessions/sessions';
import { MAX_WALLTIME_MINUTES } from './job';

/** The idle time-out a person may choose, in minutes: 5 minutes to a day. */
export const IDLE_MINUTES = { min: 5, max: 24 * 60, default: 30 } as const;

export const startSessionInput = z.object({
  allocationId: uuidField,
  resourceClassId: resourceClassIdField,
  app: z.enum(SESSION_APP_IDS),
  gpus: z.number().int().min(1).max(64),
  walltimeMinutes: z.number().int().min(1).max(MAX_WALLTIME_MINUTES),
  idleTimeoutMinutes: z.number().int().min(IDLE_MINUTES.min).max(IDLE_MINUTES.max).default(IDLE_MINUTES.default),
  idempotencyKey: idempotencyKeyField,
});

const sessionOut = z.object({
  id: z.string(),
  name: z.string(),
  app: z.string(),
  appName: z.string(),
  state: z.enum(jobState.enumValues),
  resourceClassId: z.string(),
  /** The class's name in the reader's language. */
  resourceClassName: z.string(),
  gpus: z.number().int(),
  submittedAt: isoDateOut,
  startedAt: isoDateOut.nullable(),
  endedAt: isoDateOut.nullable(),
  walltimeSeconds: z.number().int(),
  /** The allocation's unit and the price per GPU-hour in cents the session was admitted at (its time's cost: core jobReservation). */
  unit: z.enum(['gpu_seconds', 'cents']),
  centsPerGpuHour: z.number().int(),
  /** When its walltime runs out (null: not started). */
  endsAt: isoDateOut.nullable(),
  idleTimeoutSeconds: z.number().int(),
  /** How much longer it may still be made to run, in seconds (0: it cannot be extended). */
  extendableSeconds: z.number().int(),
  /** Asked to end (by the person or the idle time-out) and not ended yet. */
  cancelRequested: z.boolean(),
  /** The session's address in the portal, `/sessions/<id>/`. */
  url: z.string(),
  /** Running, and its app answers: it can be opened now. */
  ready: z.boolean(),
});

export const sessionRouter = router({
  /** The apps this centre offers, in the reader's language. */
  apps: tenantProcedure('member')
    .output(z.array(z.object({ id: z.enum(SESSION_APP_IDS), name: z.string() })))
    .query(({ ctx }) => sessionApps(ctx.locale)),

  start: tenantProcedure('member', { rateLimit: 'jobSubmit' })
    .meta({
      openapi: {
        method: 'POST',
        path: '/sessions',
        tags: ['sessions'],
        summary: 'Start an interactive session (a Jupyter notebook on a GPU node), charged as a job (the same Idempotency-Key with the same body within 24 hours answers the same session; with another body 422 idempotency_key_reused)',
        protect: true,
        requestHeaders: z.object({ 'idempotency-key': idempotencyKeyField.optional() }),
      },
      scope: 'jobs:write',
    })
    .input(startSessionInput)
    .output(z.object({ id: z.string(), state: jobStateOut, url: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const job = await startSession(
        ctx.db,
        afterCommit(ctx),
        ctx.tenant,
        { allocationId: input.allocationId, resourceClassId: input.resourceClassId, app: input.app, gpus: input.gpus, walltimeSeconds: input.walltimeMinutes * 60, idleTimeoutSeconds: input.idleTimeoutMinutes * 60, idempotencyKey: input.idempotencyKey },
        ctx.now(),
      );
      return { id: job.id, state: job.state, url: sessionPath(job.id) };
    }),

  list: tenantProcedure('member')
    .meta({ openapi: { method: 'GET', path: '/sessions', tags: ['sessions'], summary: 'Your interactive sessions, newest first', protect: true } })
    .input(z.object({}).default({}))
    .output(z.array(sessionOut))
    .query(async ({ ctx }) => listSessions(ctx.db, ctx.tenant, rootsOf(ctx), ctx.locale, (await schedulerOf(ctx)).clockSpeed ?? 1)),

  /** One of the person's own sessions (the job page's Open button); anyone else's: NOT_FOUND. */
  get: tenantProcedure('member')
    .input(z.object({ jobId: uuidField }))
    .output(sessionOut)
    .query(async ({ ctx, input }) => getSession(ctx.db, ctx.tenant, rootsOf(ctx), ctx.locale, (await schedulerOf(ctx)).clockSpeed ?? 1, input.jobId)),

  extend: tenantProcedure('member', { rateLimit: 'jobSubmit' })
    .meta({
      openapi: { method: 'POST', path: '/sessions/{jobId}/extend', tags: ['sessions'], summary: 'Give a session more time, within its partition\'s and allocation\'s walltime limits; the added time is reserved from the budget', protect: true },
      scope: 'jobs:write',
    })
    .input(z.object({ jobId: uuidField, minutes: z.number().int().min(1).max(MAX_WALLTIME_MINUTES) }))
    .output(z.object({ id: z.string(), walltimeSeconds: z.number().int(), reserved: z.number().int() }))
    .mutation(async ({ ctx, input }) => extendSession(ctx.db, afterCommit(ctx), ctx.tenant, { jobId: input.jobId, addSeconds: input.minutes * 60 }, ctx.now())),

  end: tenantProcedure('member')
    .meta({ openapi: { method: 'POST', path: '/sessions/{jobId}/end', tags: ['sessions'], summary: 'End a session: its app is stopped and the time it ran is charged', protect: true }, scope: 'jobs:write' })
    .input(z.object({ jobId: uuidField }))
    .output(z.object({ id: z.string(), state: jobStateOut }))
    .mutation(async ({ ctx, input }) => ({ id: input.jobId, ...(await cancelJob(ctx.db, afterCommit(ctx), ctx.tenant, input.jobId, ctx.now())) })),
});
