// A person's POSIX user on a real database: made from the mail address once, unique across the centre
// also when many hand-overs of one person, or of two people with the same address's name, race; taken
// from the directory's claim at single sign-on; and recorded on each job with its project's group, the
// same on the simulated cluster as on Slurm.
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { users } from '~/db/schema';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { projectGroupName } from '~/server/core/scheduler/identity';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb, type TargetName } from '~/server/testing/harness';
import { resolveSsoSignIn } from './identities';
import { posixNameOf } from './posix';

describe.each(dbTargets())('POSIX users on %s', (target: TargetName) => {
  let handle: DbHandle;
  beforeAll(async () => {
    handle = await openTestDb(target);
  });
  afterAll(async () => handle?.close());

  async function person(email: string) {
    const [row] = await handle.db.insert(users).values({ email, name: email, passwordHash: 'x' }).returning({ id: users.id });
    return row!.id;
  }
  const nameOf = async (id: string) => (await handle.db.select({ posixName: users.posixName }).from(users).where(eq(users.id, id)))[0]!.posixName;

  it('gives one name per person, also to 20 racing hand-overs, and numbers the next person with the same name', async () => {
    const local = `anna.muller${randomUUID().slice(0, 4)}`;
    const first = await person(`${local}@uni.example`);
    const second = await person(`${local}@company.example`);
    const names = await Promise.all([...Array.from({ length: 10 }, () => posixNameOf(handle.db, first)), ...Array.from({ length: 10 }, () => posixNameOf(handle.db, second))]);
    const base = local.replace('.', '_');
    expect(new Set(names.slice(0, 10))).toEqual(new Set([await nameOf(first)]));
    expect(new Set(names.slice(10))).toEqual(new Set([await nameOf(second)]));
    expect([await nameOf(first), await nameOf(second)].sort()).toEqual([base, `${base}2`]);
    // Once given, a name stays.
    expect(await posixNameOf(handle.db, first)).toBe(await nameOf(first));
  });

  it("takes the directory's name at single sign-on, over a made one, but never one another person holds", async () => {
    const tag = randomUUID().slice(0, 6);
    const sso = { provider: 'uni', subject: `s-${tag}`, email: `ada-${tag}@uni.example`, emailVerified: true, name: 'Ada', entitlements: [] };
    const signedIn = await resolveSsoSignIn(handle.db, { ...sso, posixName: `alove${tag}` }, []);
    if (signedIn.kind !== 'signedIn') throw new Error('expected a sign-in');
    expect(await nameOf(signedIn.user.id)).toBe(`alove${tag}`);
    expect(await posixNameOf(handle.db, signedIn.user.id)).toBe(`alove${tag}`);
    // The directory renamed her: the next sign-in follows it.
    await resolveSsoSignIn(handle.db, { ...sso, posixName: `alovelace${tag}` }, []);
    expect(await nameOf(signedIn.user.id)).toBe(`alovelace${tag}`);
    // A name someone else holds in the portal is not taken from them.
    const other = await person(`other-${tag}@uni.example`);
    const held = await posixNameOf(handle.db, other);
    await resolveSsoSignIn(handle.db, { ...sso, posixName: held }, []);
    expect(await nameOf(signedIn.user.id)).toBe(`alovelace${tag}`);
    expect(await nameOf(other)).toBe(held);
  });

  it("records who each job runs as on the simulated cluster: its person's user and its project's group", async () => {
    const admin = await createStaff(handle.db, 'admin');
    const owner = await createTenant(handle.db);
    const today = new Date().toISOString().slice(0, 10);
    const { allocationId, projectId } = await activeAllocation(handle.db, owner, admin, { gpuHours: 10, today });
    const scheduler = createSimulatedScheduler({ db: handle.db, cluster: await clusterConfigFromCatalogue(handle.db), speed: 60, now: () => new Date(), clusterId: `posix-${randomUUID().slice(0, 8)}` });
    const asOwner = callerFor(handle.db, { userId: owner.userId, orgId: owner.orgId, scheduler });
    const job = await asOwner.job.submit({ allocationId, resourceClassId: 'h100', name: 'who', kind: 'training', gpus: 1, nodes: 1, walltimeMinutes: 10, image: 'img', command: 'true', env: {}, idempotencyKey: randomUUID() });
    expect(job.state).toBe('PENDING');
    const page = await asOwner.job.get({ jobId: job.id });
    expect(page).toMatchObject({ runAsUser: await nameOf(owner.userId), runAsGroup: projectGroupName(projectId) });
    expect(page.runAsUser).toMatch(/^owner/);
    const rows = await handle.db.select({ posixName: users.posixName }).from(users).where(inArray(users.id, [owner.userId]));
    expect(rows[0]!.posixName).toBe(page.runAsUser);
  });
});
