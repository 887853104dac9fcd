// A job's output on a real Slurm through the whole portal (issue #27): the job runs in its folder in
// its project's workspace (jobs/<id>), slurmd writes its stdout and stderr there as it runs, and the
// portal's job page reads them live (files.output following from an offset) and after the end; an
// input picked from the workspace reaches the job as PORTAL_INPUTS, and another tenant reads nothing.
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { jobs } from '~/db/schema';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { workspaceOf } from '~/server/services/files/workspace';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { activeAllocation, callerFor, createStaff, createTenant } from '~/server/testing/harness';
import { useSlurmPortal, waitUntil } from './testing';

describe("a job's output on a real Slurm, in its workspace and on its page", () => {
  const slurm = useSlurmPortal();
  const now = () => new Date();

  it('stdout grows in the workspace while the job runs; the portal follows it and shows all of it after the end', { timeout: 300_000 }, async () => {
    const { db, port } = slurm;
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db, { name: `Slurm Output ${randomUUID().slice(0, 6)}` });
    const other = await createTenant(db, { name: `Slurm Stranger ${randomUUID().slice(0, 6)}` });
    const { allocationId, projectId } = await activeAllocation(db, owner, admin, { gpuHours: 10, today: now().toISOString().slice(0, 10), scheduler: port });
    const api = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler: port });
    const stranger = callerFor(db, { userId: other.userId, orgId: other.orgId, now, scheduler: port });
    // An input in the workspace, as an upload would leave it.
    const workspace = workspaceOf(configuredSiteRoots(), 'de-jena', projectId);
    await api.files.makeFolder({ projectId, site: 'de-jena', path: 'data' });
    await writeFile(path.join(workspace.dir, 'data', 'train.txt'), 'alpha\nbeta\ngamma\n');

    const command = 'echo "cwd $(pwd)"; echo "inputs $PORTAL_INPUTS"; wc -l < "$PORTAL_INPUTS"; for i in $(seq 1 12); do echo "step $i"; sleep 0.5; done; echo "a warning" >&2; echo "model" > "$PORTAL_JOB_DIR/model.bin"';
    const job = await api.job.submit({ allocationId, resourceClassId: 'h100', name: 'output', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 5, image: 'img', command, env: {}, inputs: ['data/train.txt'], idempotencyKey: randomUUID() });
    const row = async () => (await db.select().from(jobs).where(eq(jobs.id, job.id)))[0]!;

    // Live: the portal reads the file Slurm is writing; following from the end it gets the new lines.
    type Read = Awaited<ReturnType<typeof api.files.output>>;
    let seen: Read | undefined;
    expect(
      await waitUntil(async () => {
        await reconcileOnce(db, port, now());
        const out = await api.files.output({ jobId: job.id });
        if (out.text.includes('step 2')) seen = out;
        return seen !== undefined;
      }, 120),
    ).toBe(true);
    expect((await row()).state).toBe('RUNNING');
    expect(seen!.done).toBe(false);
    expect(seen!.text).toContain(`cwd ${workspace.dir}/jobs/${job.id}`);
    expect(seen!.text).toContain(`inputs ${workspace.dir}/data/train.txt`);
    let later: Read | undefined;
    expect(
      await waitUntil(async () => {
        const out = await api.files.output({ jobId: job.id, from: seen!.end });
        if (out.text.includes('step 6')) later = out;
        return later !== undefined;
      }, 30),
    ).toBe(true);
    expect(later!.start).toBe(seen!.end);

    // After the end: all of it, stdout and stderr apart, and what the job wrote into its folder.
    expect(await waitUntil(async () => (await reconcileOnce(db, port, now()), (await row()).settledAt !== null), 120)).toBe(true);
    expect((await row()).state).toBe('COMPLETED');
    const all = await api.files.output({ jobId: job.id });
    expect(all.done).toBe(true);
    expect(all.text).toMatch(/^cwd .*\ninputs .*\n3\n(step \d+\n){12}$/);
    expect((await api.files.output({ jobId: job.id, stream: 'stderr' })).text).toBe('a warning\n');
    expect((await api.job.get({ jobId: job.id })).output.at(-1)).toBe('step 12');
    const folder = await api.files.jobFolder({ jobId: job.id });
    expect(folder.listing.entries.map((e) => e.name)).toEqual(expect.arrayContaining(['model.bin', 'stdout.log', 'stderr.log']));
    // Another tenant reads none of it.
    await expect(stranger.files.output({ jobId: job.id })).rejects.toSatisfy((e: unknown) => e instanceof TRPCError && e.code === 'NOT_FOUND');
    await expect(stranger.files.list({ projectId, site: 'de-jena', path: `jobs/${job.id}` })).rejects.toSatisfy((e: unknown) => e instanceof TRPCError && e.code === 'NOT_FOUND');
  });
});
