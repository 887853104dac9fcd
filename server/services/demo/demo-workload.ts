// Months of plausible history for the demo centre: generated work for the demo tenants is run
// through the simulator (queues, backfilling, energy) and every job is recorded, reserved and
// settled through the real job and ledger code, so reports, charts and invoices start out filled.
import { eq } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { jobEvents, jobs, resourceClasses, sites, tariffs, type OrgKind } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { simulatedOutcome, type JobKind } from '~/server/core/jobs/estimates';
import { jobReservation } from '~/server/core/jobs/estimates';
import { defaultServedModel } from '~/server/core/jobs/inference';
import { createEngine, policyFromName, type JobSpec } from '~/server/core/sim';
import { createRng, nextFloat } from '~/server/core/sim/random';
import type { SchedulerJobStatus } from '~/server/core/scheduler/port';
import { reserveBudget } from '~/server/services/ledger/ledger';
import { settleFinishedJob } from '~/server/services/jobs/reconciler';
import { atReplayedTime } from '~/server/services/replay-clock';

export interface DemoStream {
  orgId: string;
  orgKind: OrgKind;
  projectId: string;
  userIds: string[];
  allocationId: string;
  unit: 'gpu_seconds' | 'cents';
  resourceClassId: string;
  /** Inclusive window of submissions, as epoch seconds. */
  fromSeconds: number;
  toSeconds: number;
  jobsPerDay: number;
  kinds: JobKind[];
  gpuChoices: number[];
  walltimeHours: number[];
  /** Stop adding work once this much budget (allocation unit) would be reserved in total. */
  budgetCap: number;
}

interface PlannedJob {
  stream: DemoStream;
  id: string;
  spec: JobSpec;
  kind: JobKind;
  userId: string;
  submittedAt: Date;
}

function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** runDemoWorkload plans the streams' jobs, schedules them on the simulated cluster and records and settles each. */
export async function runDemoWorkload(db: Db, streams: DemoStream[], now: Date, seed = 2026): Promise<{ jobs: number }> {
  const rng = createRng(seed);
  const random = () => nextFloat(rng);
  const planned: PlannedJob[] = [];
  const cluster = await clusterConfigFromCatalogue(db);
  const gpusPerNode = new Map(cluster.partitions.map((p) => [p.name, p.gpusPerNode]));
  for (const stream of streams) {
    const days = Math.floor((stream.toSeconds - stream.fromSeconds) / 86_400);
    let reserved = 0;
    const tariff = (await db.select({ cents: tariffs.centsPerGpuHour }).from(tariffs).where(eq(tariffs.resourceClassId, stream.resourceClassId)).limit(1))[0]?.cents ?? 0;
    for (let d = 0; d < days; d++) {
      const weekday = new Date((stream.fromSeconds + d * 86_400) * 1000).getUTCDay();
      const rate = weekday === 0 || weekday === 6 ? stream.jobsPerDay * 0.3 : stream.jobsPerDay;
      const count = Math.floor(rate + random());
      for (let j = 0; j < count; j++) {
        const gpus = stream.gpuChoices[Math.floor(random() * stream.gpuChoices.length)]!;
        const walltimeSeconds = stream.walltimeHours[Math.floor(random() * stream.walltimeHours.length)]! * 3600;
        const amount = jobReservation({ unit: stream.unit, gpus, walltimeSeconds, centsPerGpuHour: tariff });
        if (reserved + amount > stream.budgetCap) continue;
        reserved += amount;
        const id = uuidFrom(random);
        const kind = stream.kinds[Math.floor(random() * stream.kinds.length)]!;
        const outcome = simulatedOutcome({ jobId: id, kind: kind === 'inference' ? 'training' : kind, walltimeSeconds });
        const submit = stream.fromSeconds + d * 86_400 + Math.floor((7 + random() * 12) * 3600);
        if (submit >= stream.toSeconds) continue;
        const nodes = Math.ceil(gpus / (gpusPerNode.get(stream.resourceClassId) ?? 8));
        planned.push({
          stream,
          id,
          kind,
          userId: stream.userIds[Math.floor(random() * stream.userIds.length)]!,
          submittedAt: new Date(submit * 1000),
          spec: { id, submitTimeSeconds: submit, user: stream.orgId, account: stream.projectId, partition: stream.resourceClassId, gpus, nodes, walltimeLimitSeconds: walltimeSeconds, runtimeSeconds: outcome.runtimeSeconds, gpuUtilPercent: outcome.gpuUtilPercent, exitCode: outcome.exitCode },
        });
      }
    }
  }
  planned.sort((a, b) => a.spec.submitTimeSeconds - b.spec.submitTimeSeconds);
  if (planned.length === 0) return { jobs: 0 };

  // Schedule everything on the simulated cluster, as it would have run.
  const engine = createEngine({ cluster, policy: policyFromName('multifactor'), seed, startTimeSeconds: planned[0]!.spec.submitTimeSeconds, nodeFailures: null });
  for (const p of planned) engine.submit(p.spec);
  engine.runToCompletion(Math.floor(now.getTime() / 1000));

  const siteOf = new Map((await db.select({ id: resourceClasses.id, siteId: sites.id }).from(resourceClasses).innerJoin(sites, eq(sites.id, resourceClasses.siteId))).map((r) => [r.id, r.siteId]));
  const tariffOf = new Map((await db.select().from(tariffs)).map((t) => [`${t.resourceClassId}:${t.tenantKind}`, t.centsPerGpuHour]));
  let recorded = 0;
  for (const p of planned) {
    const view = engine.job(p.id);
    if (!view || view.endTimeSeconds === null || view.startTimeSeconds === null || view.endTimeSeconds * 1000 > now.getTime()) continue;
    const centsPerGpuHour = tariffOf.get(`${p.stream.resourceClassId}:${p.stream.orgKind}`)!;
    const amount = jobReservation({ unit: p.stream.unit, gpus: p.spec.gpus, walltimeSeconds: p.spec.walltimeLimitSeconds, centsPerGpuHour });
    const [job] = await db
      .insert(jobs)
      .values({
        id: p.id,
        orgId: p.stream.orgId,
        projectId: p.stream.projectId,
        allocationId: p.stream.allocationId,
        userId: p.userId,
        idempotencyKey: `demo-${p.id}`,
        name: `${p.kind.replace('_', '-')}-${p.id.slice(0, 6)}`,
        kind: p.kind,
        servedModel: p.kind === 'inference' ? defaultServedModel(`${p.kind}-${p.id.slice(0, 6)}`) : null,
        resourceClassId: p.stream.resourceClassId,
        siteId: siteOf.get(p.stream.resourceClassId)!,
        gpus: p.spec.gpus,
        nodes: p.spec.nodes,
        walltimeSeconds: p.spec.walltimeLimitSeconds,
        image: 'nvcr.io/nvidia/pytorch:24.05-py3',
        command: p.kind === 'fine_tuning' ? 'python finetune.py --config lora.yaml' : 'torchrun train.py --config config.yaml',
        env: {},
        simulation: { runtimeSeconds: p.spec.runtimeSeconds, gpuUtilPercent: p.spec.gpuUtilPercent, exitCode: p.spec.exitCode },
        state: 'PENDING',
        schedulerJobId: `sim-history-${recorded}`,
        reservedAmount: amount,
        reservedUnit: p.stream.unit,
        centsPerGpuHour,
        submittedAt: p.submittedAt,
        updatedAt: p.submittedAt,
      })
      .returning();
    await atReplayedTime(p.submittedAt, () =>
      db.transaction((tx) => reserveBudget(tx, { allocationId: p.stream.allocationId, orgId: p.stream.orgId, jobId: p.id, amount, actorUserId: p.userId, today: p.submittedAt.toISOString().slice(0, 10), at: p.submittedAt })),
    );
    await db.insert(jobEvents).values([
      { jobId: p.id, at: p.submittedAt, state: 'SUBMITTING', message: 'job.event.submitted' },
      { jobId: p.id, at: p.submittedAt, state: 'PENDING', message: 'job.event.queued' },
    ]);
    const startedAt = new Date(view.startTimeSeconds * 1000);
    const endedAt = new Date(view.endTimeSeconds * 1000);
    const status: SchedulerJobStatus = {
      portalJobId: p.id,
      schedulerJobId: job!.schedulerJobId!,
      state: view.state,
      pendingReason: null,
      startedAt,
      endedAt,
      exitCode: view.exitCode,
      signal: view.signal,
      nodeList: view.nodeList,
      gpuSeconds: p.spec.gpus * (view.endTimeSeconds - view.startTimeSeconds),
      energyWh: view.energyWh ?? 0,
      energyMeasured: false,
      siteId: siteOf.get(p.stream.resourceClassId)!,
    };
    // Usage notices and their audit rows are dated when the job ended, as the live reconciler would.
    await atReplayedTime(endedAt, () => settleFinishedJob(db, job!, status, endedAt));
    recorded++;
  }
  return { jobs: recorded };
}
