// The second wall: Postgres row-level security. A tenant read that forgets its tenant filter still
// sees only its own tenant's rows, because tenant reads run as the role portal_tenant.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { organisations, projects } from '~/db/schema';
import { createCallerFactory, createContextInner, router, tenantProcedure } from '~/server/api/trpc';
import { callerFor, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

// A deliberately careless procedure: it selects every project and organisation with no tenant filter.
const carelessRouter = router({
  everyProject: tenantProcedure('member').query(({ ctx }) => ctx.db.select({ id: projects.id, orgId: projects.orgId }).from(projects)),
  everyOrganisation: tenantProcedure('member').query(({ ctx }) => ctx.db.select({ id: organisations.id }).from(organisations)),
  writeDuringRead: tenantProcedure('member').query(({ ctx }) => ctx.db.execute(sql`update projects set title = 'changed'`)),
  // Reads of what a tenant read may never see, whatever its filter (drizzle/0017).
  readTable: tenantProcedure('member')
    .input((v) => v as string)
    .query(({ ctx, input }) => ctx.db.execute(sql.raw(`select * from ${input} limit 1`))),
  readPeople: tenantProcedure('member').query(({ ctx }) => ctx.db.execute(sql`select id, email, name from users limit 1`)),
  readPasswordHashes: tenantProcedure('member').query(({ ctx }) => ctx.db.execute(sql`select password_hash from users limit 1`)),
});
const carelessCaller = createCallerFactory(carelessRouter);

describe.each(dbTargets())('row-level security on %s', (target) => {
  let handle: DbHandle;
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    a = await createTenant(handle.db, { name: 'Wall A' });
    b = await createTenant(handle.db, { name: 'Wall B' });
    for (const who of [a, a, b]) {
      await callerFor(handle.db, { userId: who.userId }).project.create({ title: `Project of ${who.orgName}`, abstract: 'A project behind the wall.', fieldOfScience: 'Physics', members: [] });
    }
  });
  afterAll(async () => handle?.close());

  it('shows a tenant read only its own rows even without a tenant filter', async () => {
    const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
    const seenByA = await asA.everyProject();
    expect(seenByA).toHaveLength(2);
    expect(new Set(seenByA.map((p) => p.orgId))).toEqual(new Set([a.orgId]));
    expect(await asA.everyOrganisation()).toEqual([{ id: a.orgId }]);
    const asB = carelessCaller(createContextInner({ db: handle.db, userId: b.userId }));
    expect((await asB.everyProject()).map((p) => p.orgId)).toEqual([b.orgId]);
  });

  it('keeps password hashes, staff roles, notifications, sessions and the cluster’s internals out of a tenant read’s reach', async () => {
    const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
    /** The messages of an error and its causes (drizzle wraps the database's refusal). */
    const refusal = async (call: Promise<unknown>) => {
      const messages: string[] = [];
      for (let e: unknown = await call.then(() => undefined, (error: unknown) => error); e instanceof Error; e = e.cause) messages.push(e.message);
      return messages.join(' / ');
    };
    expect(await refusal(asA.readPasswordHashes())).toMatch(/permission denied for table users/);
    for (const table of ['staff_roles', 'notifications', 'sessions', 'rate_limits', 'sim_cluster_state', 'sim_cluster_ops', 'sim_cluster_snapshots', 'sim_finished_jobs', 'document_counters', 'cluster_samples']) {
      expect(await refusal(asA.readTable(table)), table).toMatch(new RegExp(`permission denied for table ${table}`));
    }
    // Names and e-mail addresses stay readable (member lists, project members).
    expect(await asA.readPeople()).toBeTruthy();
  });

  it('refuses writes inside a tenant read', async () => {
    const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
    await expect(asA.writeDuringRead()).rejects.toThrow();
    const titles = await handle.db.select({ title: projects.title }).from(projects);
    expect(titles.every((p) => p.title.startsWith('Project of'))).toBe(true);
  });

  it('leaves the portal’s own connection unrestricted (staff views, the worker)', async () => {
    expect(await handle.db.select({ id: projects.id }).from(projects)).toHaveLength(3);
  });
});
