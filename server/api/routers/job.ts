import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { budgetUnit, jobKind, jobState, resourceClasses } from '~/db/schema';
import { afterCommit, router, schedulerOf, tenantProcedure, todayOf, rootsOf } from '~/server/api/trpc';
import { idempotencyKeyField, resourceClassIdField, textField, uuidField } from '~/server/api/fields';
import { isoDateOut, jobRowOut, jobStateOut } from '~/server/api/outputs';
import { exitStatusOut, fineTuneEstimateOut, jobEstimateOut, lowCarbonStartOut, jobTargetsOut } from './job.outputs';
import { fineTuneEstimate } from '~/server/core/jobs/estimates';
import { SERVED_MODEL_PATTERN } from '~/server/core/jobs/inference';
import { JOB_DEPENDENCY_TYPES } from '~/server/core/scheduler/port';
import { AppError } from '~/server/errors';
import { jobWorkspace, readJobOutput } from '~/server/services/files/files';
import { MAX_WINDOW_HOURS, suggestLowCarbonStart } from '~/server/services/jobs/carbon';
import { cancelJob, estimateJob, getJob, jobTargets, listJobs, submitJob } from '~/server/services/jobs/jobs';

export const MAX_SCRIPT_CHARS = 100_000;
export const MAX_WALLTIME_MINUTES = 30 * 24 * 60;

const shape = {
  allocationId: uuidField,
  resourceClassId: resourceClassIdField,
  gpus: z.number().int().min(1).max(4096),
  nodes: z.number().int().min(1).max(1024),
  walltimeMinutes: z.number().int().min(1).max(MAX_WALLTIME_MINUTES),
  /** A job array, as Slurm's --array ("0-99", "1,3,5-11:2", "0-9999%64"); checked in the service (parseArray). */
  array: z.string().max(200).optional(),
};

const envField = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'job.envName'), textField(0, 4096, { multiline: true }))
  .refine((env) => Object.keys(env).length <= 50, 'job.envTooMany')
  .default({});

export const submitJobInput = z.object({
  ...shape,
  name: textField(1, 120),
  kind: z.enum(['training', 'fine_tuning', 'inference', 'batch']),
  image: z.string().trim().min(1).max(300).regex(/^[\w.\-/:@]+$/, 'job.imageFormat'),
  command: textField(1, MAX_SCRIPT_CHARS, { multiline: true }),
  env: envField,
  idempotencyKey: idempotencyKeyField,
  /** An inference service's model name at the gateway (default: from the job's name); only for kind `inference` (checked in the service). */
  servedModel: z.string().trim().regex(SERVED_MODEL_PATTERN, 'job.servedModelInvalid').optional(),
  /** Workspace paths the job reads (checked in the service: each must be a file or folder there); the job sees them as PORTAL_INPUTS. */
  inputs: z.array(z.string().max(4096)).max(20, 'job.inputsTooMany').optional(),
  /** Earliest start (ISO date-time); checked against the clock in the service (createJob). */
  begin: z.iso.datetime({ offset: true, message: 'job.beginFormat' }).optional(),
  /** Start only after these jobs of the same project ended as `type` asks; checked in the service (createJob). */
  dependency: z
    .object({ type: z.enum(JOB_DEPENDENCY_TYPES), jobIds: z.array(uuidField).min(1).max(16, 'job.dependencyTooMany') })
    .strict()
    .optional(),
  estimate: z
    .object({
      runtimeSeconds: z.number().int().positive().optional(),
      template: textField(0, 60).optional(),
      assumptions: z.record(textField(1, 60), z.union([textField(0, 200), z.number()])).optional(),
    })
    .optional(),
});

/**
 * What `job.get` answers (and nothing else: zod drops any other field). Environment values are null
 * for viewers other than the submitter and the project's PI (server/services/jobs/jobs.ts getJob).
 */
const jobView = z.object({
  id: z.string(),
  orgId: z.string(),
  projectId: z.string(),
  projectTitle: z.string(),
  allocationId: z.string(),
  userId: z.string(),
  name: z.string(),
  kind: z.enum(jobKind.enumValues),
  resourceClassId: z.string(),
  siteId: z.string(),
  gpus: z.number(),
  nodes: z.number(),
  walltimeSeconds: z.number(),
  image: z.string(),
  command: z.string(),
  env: z.array(z.object({ name: z.string(), value: z.string().nullable() })),
  estimate: z.record(z.string(), z.unknown()).nullable(),
  state: z.enum(jobState.enumValues),
  pendingReason: z.string().nullable(),
  schedulerJobId: z.string().nullable(),
  /** Starts only after these jobs of the project ended as `type` asks (null: no dependency). */
  dependency: z.object({ type: z.enum(JOB_DEPENDENCY_TYPES), jobIds: z.array(z.string()) }).nullable(),
  /** The jobs it starts after, with their names and states now. */
  dependencyJobs: z.array(z.object({ id: z.string(), name: z.string(), state: z.enum(jobState.enumValues) })),
  /**
   * A job array: its text, tasks and throttle, how many tasks are in each state (running, waiting and each
   * final state), and its tasks that started, by index (the first `shown`); null: one job.
   */
  array: z
    .object({
      text: z.string(),
      tasks: z.number().int(),
      throttle: z.number().int().nullable(),
      counts: z.record(z.string(), z.number().int()),
      started: z.number().int(),
      list: z.array(
        z.object({
          index: z.number().int(),
          state: z.enum(jobState.enumValues),
          startedAt: isoDateOut.nullable(),
          endedAt: isoDateOut.nullable(),
          exitCode: z.number().int().nullable(),
          exitSignal: z.number().int().nullable(),
          nodeList: z.array(z.string()),
          gpuSeconds: z.number().int(),
          costCents: z.number().int().nullable(),
        }),
      ),
    })
    .nullable(),
  /** Who the job runs as on the cluster: the person's POSIX user and the project's group (null until handed over). */
  runAsUser: z.string().nullable(),
  runAsGroup: z.string().nullable(),
  reservedAmount: z.number(),
  reservedUnit: z.enum(budgetUnit.enumValues),
  centsPerGpuHour: z.number(),
  submittedAt: isoDateOut,
  /** Asked to start no earlier than this (Slurm's --begin), or null. */
  beginAt: isoDateOut.nullable(),
  startedAt: isoDateOut.nullable(),
  endedAt: isoDateOut.nullable(),
  /** The exit code as Slurm reports it: 0 when a signal ended the job (exitSignal says which); null while it runs or if it never ran. */
  exitCode: z.number().nullable(),
  /** The signal that ended the job (a TIMEOUT: 15), else null. */
  exitSignal: z.number().nullable(),
  /** Both in one, with the signal's name and Slurm's notation ("0:15"); null when nothing was reported. */
  exitStatus: exitStatusOut.nullable(),
  nodeList: z.array(z.string()).nullable(),
  gpuSeconds: z.number().nullable(),
  energyWh: z.number().nullable(),
  energyMeasured: z.boolean().nullable(),
  costCents: z.number().nullable(),
  chargedAmount: z.number().nullable(),
  facilityEnergyWh: z.number().nullable(),
  heatReusedWh: z.number().nullable(),
  co2eGrams: z.number().nullable(),
  waitSeconds: z.number().nullable(),
  settledAt: isoDateOut.nullable(),
  cancelRequestedAt: isoDateOut.nullable(),
  updatedAt: isoDateOut,
  canCancel: z.boolean(),
  /** A submitted job not yet at the scheduler while the scheduler does not answer: it waits, safe. */
  waitingForScheduler: z.boolean(),
  resourceClassName: z.string(),
  gpuModel: z.string(),
  siteName: z.string(),
  site: z.object({ pueMilli: z.number().int(), heatReusePermille: z.number().int(), gridGco2PerKwh: z.number().int() }).nullable(),
  efficiency: z.object({ runSeconds: z.number().int(), walltimeUsedPercent: z.number().int(), meanGpuUtilPercent: z.number().int().nullable() }).nullable(),
  costSoFarCents: z.number().int().nullable(),
  /** When the job waited for its `begin`: CO2e as run against starting at once (server/services/jobs/co2e-saved.ts). */
  co2eSaved: z.object({ co2eAtOnceGrams: z.number().int(), co2eAsRunGrams: z.number().int(), savedGrams: z.number().int() }).nullable(),
  inference: z.object({ endpointUrl: z.string(), model: z.string(), requests: z.number().int(), tokens: z.number().int() }).nullable(),
  events: z.array(z.object({ id: z.number(), jobId: z.string(), at: isoDateOut, state: z.enum(jobState.enumValues), message: z.string().nullable(), data: z.record(z.string(), z.unknown()).nullable() })),
  /** The last lines of its stdout (of an array: its first task's); the rest: `GET /jobs/{jobId}/output`. */
  output: z.array(z.string()),
  /** On a real Slurm: the job's folder on the cluster's filesystem (its files and output lie there), else null. */
  outputLocation: z.string().nullable(),
});

export const jobRouter = router({
  estimate: tenantProcedure('member')
    .meta({ openapi: { method: 'POST', path: '/jobs/estimate', tags: ['jobs'], summary: 'Estimate a job: reservation, cost and energy, and every limit it would break', protect: true } })
    .input(z.object({ ...shape, runtimeSeconds: z.number().int().positive().optional() }))
    .output(jobEstimateOut)
    .query(({ ctx, input }) => estimateJob(ctx.db, ctx.tenant, { ...input, walltimeSeconds: input.walltimeMinutes * 60 }, todayOf(ctx))),

  /** When a job that may wait `windowHours` should start for the least CO2e at its site, and what that saves. */
  lowCarbonStart: tenantProcedure('member')
    .input(z.object({ ...shape, runtimeSeconds: z.number().int().positive().optional(), windowHours: z.number().int().min(0).max(MAX_WINDOW_HOURS) }))
    .output(lowCarbonStartOut)
    .query(({ ctx, input }) => suggestLowCarbonStart(ctx.db, ctx.tenant, { ...input, walltimeSeconds: input.walltimeMinutes * 60 }, ctx.now())),

  /** The fine-tuning template's runtime estimate: 6 × parameters × tokens FLOPs over peak × utilisation. */
  fineTuneEstimate: tenantProcedure('member')
    .input(
      z.object({
        resourceClassId: resourceClassIdField,
        paramsBillions: z.number().positive().max(2000),
        tokensBillions: z.number().positive().max(100_000),
        gpus: z.number().int().min(1).max(4096),
        utilisationPercent: z.number().int().min(5).max(90).default(40),
      }),
    )
    .output(fineTuneEstimateOut)
    .query(async ({ ctx, input }) => {
      const [rc] = await ctx.db.select({ peakTflops: resourceClasses.peakTflops, gpuModel: resourceClasses.gpuModel }).from(resourceClasses).where(eq(resourceClasses.id, input.resourceClassId));
      if (!rc) throw new AppError('BAD_REQUEST', 'job.unknownClass', { resourceClass: input.resourceClassId }, 'resourceClassId');
      return { ...fineTuneEstimate({ ...input, peakTflops: rc.peakTflops }), peakTflops: rc.peakTflops, gpuModel: rc.gpuModel, utilisationPercent: input.utilisationPercent };
    }),

  submit: tenantProcedure('member', { rateLimit: 'jobSubmit' })
    .meta({
      openapi: {
        method: 'POST',
        path: '/jobs',
        tags: ['jobs'],
        summary: 'Submit a job (the same Idempotency-Key with the same body within 24 hours answers the same job; with another body 422 idempotency_key_reused)',
        protect: true,
        requestHeaders: z.object({ 'idempotency-key': idempotencyKeyField.optional() }),
      },
      scope: 'jobs:write',
    })
    .input(submitJobInput)
    .output(z.object({ id: z.string(), state: jobStateOut }))
    .mutation(async ({ ctx, input }) => {
      const job = await submitJob(ctx.db, afterCommit(ctx), ctx.tenant, { ...input, walltimeSeconds: input.walltimeMinutes * 60 }, ctx.now());
      return { id: job.id, state: job.state };
    }),

  cancel: tenantProcedure('member')
    .meta({ openapi: { method: 'POST', path: '/jobs/{jobId}/cancel', tags: ['jobs'], summary: 'Cancel a job (an inference service is stopped)', protect: true }, scope: 'jobs:write' })
    .input(z.object({ jobId: uuidField }))
    .output(z.object({ id: z.string(), state: jobStateOut }))
    .mutation(async ({ ctx, input }) => ({ id: input.jobId, ...(await cancelJob(ctx.db, afterCommit(ctx), ctx.tenant, input.jobId, ctx.now())) })),

  list: tenantProcedure('member')
    .input(
      z
        .object({
          status: z.enum(['active', 'finished', 'all']).default('all'),
          projectId: uuidField.optional(),
          kind: z.enum(['training', 'fine_tuning', 'inference', 'batch', 'interactive']).optional(),
          limit: z.number().int().min(1).max(500).default(100),
        })
        .default({ status: 'all', limit: 100 }),
    )
    .output(z.array(jobRowOut))
    .query(({ ctx, input }) => listJobs(ctx.db, ctx.tenant, input, ctx.locale)),

  get: tenantProcedure('member')
    .meta({ openapi: { method: 'GET', path: '/jobs/{jobId}', tags: ['jobs'], summary: 'A job with its events, figures and output', protect: true } })
    .input(z.object({ jobId: uuidField }))
    .output(jobView)
    .query(async ({ ctx, input }) => {
      const job = await getJob(ctx.db, ctx.tenant, input.jobId, ctx.locale);
      // The last lines of its stdout, from its folder in the project's workspace (written there by the
      // simulated cluster, or by Slurm's nodes); the page follows the rest with files.output.
      const tail = await readJobOutput(ctx.db, ctx.tenant, { jobId: job.id, stream: 'stdout', limit: 16 * 1024, ...(job.array ? { task: job.array.list[0]?.index ?? 0 } : {}) }, rootsOf(ctx)).catch(() => null);
      const output = tail?.text ? tail.text.replace(/\n$/, '').split('\n').slice(-200) : [];
      // On a real cluster, where the folder lies for those who log in there.
      const scheduler = await schedulerOf(ctx);
      const outputLocation = scheduler.outputLocation && job.schedulerJobId ? (await jobWorkspace(ctx.db, ctx.tenant, job.id, rootsOf(ctx))).dir : null;
      return { ...job, output, outputLocation };
    }),

  /** Where the actor may run jobs: active allocations of their projects, and the resource classes their tenant may use. */
  targets: tenantProcedure('member')
    .output(jobTargetsOut)
    .query(({ ctx }) => jobTargets(ctx.db, ctx.tenant, todayOf(ctx), ctx.locale)),
});
