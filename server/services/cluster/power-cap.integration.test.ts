// The facility power cap through the API, with the catalogue giving Jena a 45 kW cap: staff see each site's
// facility power (the samples' IT power × the site's PUE) against its cap, and a job that could never start
// under the cap is refused at submission on the field gpus, saying how many GPUs fit (the estimate says so first).
import { randomUUID } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DbHandle } from '~/db/client';
import { clusterSamples, jobs } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { appRouter } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import type * as CatalogueModule from '~/server/catalogue';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

// Jena: 16 H100 nodes idle draw 16 × (1,500 + 8 × 70) = 32,960 W IT; a GPU at 100 % adds 630 W. A 45 kW cap at
// PUE 1.08 leaves 41,666.66 W IT: (41,666.66 − 32,960) / 630 = 13.8, so at most 13 GPUs.
vi.mock('~/server/catalogue', async (importOriginal) => {
  const original = await importOriginal<typeof CatalogueModule>();
  const capped = { ...original.DEFAULT_CATALOGUE, sites: original.DEFAULT_CATALOGUE.sites.map((s) => (s.id === 'de-jena' ? { ...s, powerCapKw: 45 } : s)) };
  return { ...original, configuredCatalogue: () => capped };
});

describe.each(dbTargets())('facility power cap on %s', (target) => {
  let handle: DbHandle;
  const now = () => new Date(Date.UTC(2026, 11, 1, 9));
  const minutesAgo = (m: number) => new Date(now().getTime() - m * 60_000);

  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  async function scheduler() {
    return createSimulatedScheduler({ db: handle.db, cluster: await clusterConfigFromCatalogue(handle.db), speed: 60, now, clusterId: `power-cap-${randomUUID().slice(0, 8)}` });
  }

  it('staff.cluster gives each site its facility power (IT × PUE) over the last day, now, and its cap', async () => {
    const db = handle.db;
    const admin = await createStaff(db, 'admin');
    const sample = (at: Date, partition: string, powerW: number) => ({ at, partition, totalGpus: 8, allocatedGpus: 0, downGpus: 0, powerW, pendingJobs: 0 });
    await db.insert(clusterSamples).values([
      sample(minutesAgo(25 * 60), 'h100', 999_999), // older than a day: not shown
      sample(minutesAgo(2), 'h100', 100_000),
      sample(minutesAgo(2), 'b200', 20_000),
      sample(minutesAgo(2), 'h100-ch', 9_440),
      sample(minutesAgo(1), 'h100', 120_000),
      sample(minutesAgo(1), 'h100-ch', 9_440),
    ]);
    const cluster = await callerFor(db, { userId: admin.userId, now, scheduler: await scheduler() }).staff.cluster();
    expect(cluster.sitePower.map(({ siteName: _name, ...site }) => site)).toEqual([
      // Lugano, PUE 1.2: 9,440 W × 1.2 = 11,328 W; now all 8 nodes idle: 8 × (900 + 4 × 70) = 9,440 W IT, the same; the demo catalogue's cap 24 kW.
      { siteId: 'ch-lugano', pueMilli: 1200, capW: 24_000, points: [{ at: minutesAgo(2), facilityW: 11_328 }, { at: minutesAgo(1), facilityW: 11_328 }], nowW: 11_328 },
      // Jena, PUE 1.08: 100,000 W → 108,000 W, 120,000 W → 129,600 W; now idle 32,960 W × 1.08 = 35,596.8 → 35,597 W; cap 45 kW.
      { siteId: 'de-jena', pueMilli: 1080, capW: 45_000, points: [{ at: minutesAgo(2), facilityW: 108_000 }, { at: minutesAgo(1), facilityW: 129_600 }], nowW: 35_597 },
      // Kajaani, PUE 1.04: 20,000 W → 20,800 W; now idle 8 × (2,000 + 8 × 120) = 23,680 W → 24,627.2 → 24,627 W.
      { siteId: 'fi-kajaani', pueMilli: 1040, capW: null, points: [{ at: minutesAgo(2), facilityW: 20_800 }], nowW: 24_627 },
    ]);
    // The partition cards are titled by their class, in the reader's language (not the ids h100, b200 …).
    const labelOf = (c: typeof cluster, partition: string) => c.partitionLabels.find((l) => l.partition === partition)?.className;
    expect(cluster.description?.partitions.map((p) => labelOf(cluster, p.name))).toEqual(expect.arrayContaining(['H100 partition (Jena)', 'B200 partition (Kajaani)', 'H100 partition (Lugano)']));
    const inGerman = await callerFor(db, { userId: admin.userId, now, scheduler: await scheduler(), locale: 'de' }).staff.cluster();
    expect(labelOf(inGerman, 'h100')).toBe('H100-Partition (Jena)');
    expect(inGerman.sitePower.map((s) => s.siteName)).toContain('Jena, Deutschland (Warmwasserkühlung)');
  });

  it('a job that could never start under the cap is refused on gpus with the most that fit; the estimate warns first', async () => {
    const db = handle.db;
    const sim = await scheduler();
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Power Lab ${randomUUID().slice(0, 6)}` });
    const { allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 1000, today: now().toISOString().slice(0, 10) });
    const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: sim });
    const input = (gpus: number, nodes: number) => ({ allocationId, resourceClassId: 'h100', name: 'big', kind: 'training' as const, gpus, nodes, walltimeMinutes: 60, image: 'img', command: 'run', env: {}, idempotencyKey: randomUUID() });

    const estimate = await asOwner.job.estimate({ allocationId, resourceClassId: 'h100', gpus: 16, nodes: 2, walltimeMinutes: 60 });
    expect(estimate.powerCap).toEqual({ capKw: 45, requestedGpus: 16, maxGpus: 13 });
    expect((await asOwner.job.estimate({ allocationId, resourceClassId: 'h100', gpus: 8, nodes: 1, walltimeMinutes: 60 })).powerCap).toBeNull();

    const refused = await asOwner.job.submit(input(16, 2)).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TRPCError);
    const shape = getErrorShape({ config: appRouter._def._config, error: refused as TRPCError, type: 'mutation', path: 'job.submit', input: undefined, ctx: createContextInner({ db, locale: 'en' }) }) as { data: { fieldErrors?: Record<string, string> } };
    expect((refused as TRPCError).code).toBe('BAD_REQUEST');
    expect(Object.keys(shape.data.fieldErrors ?? {})).toEqual(['gpus']);
    expect(shape.data.fieldErrors!.gpus).toBe("16 GPUs at full load, with the rest of the site idle, would draw more than the site's facility power cap of 45 kW, so the job could never start. At most 13 GPUs fit under the cap.");
    // Nothing was written for it; a job within the cap is accepted and handed to the (capped) simulated cluster.
    expect(await db.select().from(jobs).where(eq(jobs.allocationId, allocationId))).toEqual([]);
    const accepted = await asOwner.job.submit(input(8, 1));
    expect(['PENDING', 'RUNNING']).toContain(accepted.state);
  });
});
