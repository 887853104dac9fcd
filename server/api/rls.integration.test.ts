// The second wall: Postgres row-level security. A tenant read or write that forgets its tenant filter
// still sees and changes only its own tenant's rows, because tenant calls run as the role portal_tenant.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { allocations, auditEvents, creditLineRequests, notifications, organisations, projectMembers, projects } from '~/db/schema';
import { AppError } from '~/server/errors';
import { createCallerFactory, createContextInner, router, tenantProcedure } from '~/server/api/trpc';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb, TEST_AUTHENTICATOR } from '~/server/testing/harness';

/* eslint-disable drizzle/enforce-update-with-where, drizzle/enforce-delete-with-where -- the careless writes below forget their filter on purpose: the wall must catch them */
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
  // Writes that forgot their tenant filter, or aim at another tenant on purpose.
  renameEveryProject: tenantProcedure('member').mutation(async ({ ctx }) => (await ctx.db.update(projects).set({ title: 'Renamed by a careless write' }).returning({ orgId: projects.orgId })).map((p) => p.orgId)),
  dropEveryProjectMember: tenantProcedure('member').mutation(async ({ ctx }) => (await ctx.db.delete(projectMembers).returning({ projectId: projectMembers.projectId })).length),
  projectFor: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) => ctx.db.insert(projects).values({ orgId: input, title: 'Planted', abstract: 'Planted in another tenant.', fieldOfScience: 'Physics', createdBy: ctx.tenant.userId })),
  moveProjectsTo: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) => ctx.db.update(projects).set({ orgId: input })),
  auditFor: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) => ctx.db.insert(auditEvents).values({ orgId: input, actorUserId: ctx.tenant.userId, action: 'forged', targetType: 'organisation', targetId: input })),
  notifyPerson: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) => ctx.db.insert(notifications).values({ userId: input, messageKey: 'notice.budget80', params: {} })),
  creditRequestFor: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) => ctx.db.insert(creditLineRequests).values({ orgId: input, allocationId: '00000000-0000-4000-8000-000000000000', currentCents: 0, requestedCents: 1, reason: 'Forged', requestedBy: ctx.tenant.userId })),
  activateTenant: tenantProcedure('member').mutation(({ ctx }) => ctx.db.update(organisations).set({ status: 'active' })),
  // Money (issue #31): what an injected statement in a tenant's transaction would try.
  raiseGranted: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) => ctx.db.execute(sql`update allocations set granted = granted + 1000000 where id = ${input}`)),
  lowerReserved: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) => ctx.db.execute(sql`update allocations set reserved = 0, charged = 0 where id = ${input}`)),
  appendEntry: tenantProcedure('member')
    .input((v) => v as { allocationId: string; kind: string; amount: number })
    .mutation(({ ctx, input }) => ctx.db.execute(sql`insert into ledger_entries (allocation_id, kind, amount) values (${input.allocationId}, ${input.kind}::ledger_kind, ${input.amount})`)),
  allocationFor: tenantProcedure('member')
    .input((v) => v as string)
    .mutation(({ ctx, input }) =>
      ctx.db.execute(sql`insert into allocations (project_id, org_id, unit, period_start, period_end, granted) select id, org_id, 'gpu_seconds', current_date, current_date + 30, 1000000000 from projects where id = ${input}`),
    ),
  // RESET ROLE, then a read of every tenant's rows: the login role is what is left.
  escapeAndRead: tenantProcedure('member')
    .input((v) => v as string)
    .query(async ({ ctx, input }) => {
      await ctx.db.execute(sql.raw(input));
      const rows: unknown = await ctx.db.execute(sql`select org_id from projects`);
      return ((rows && typeof rows === 'object' && 'rows' in rows ? rows.rows : rows) as { org_id: string }[]).map((r) => r.org_id);
    }),
  // Meets contention once (a deadlock's code), then succeeds: run again as a whole, the first attempt's write rolled back.
  flaky: tenantProcedure('member').mutation(async ({ ctx }) => {
    flaky.attempts++;
    await ctx.db.insert(auditEvents).values({ orgId: ctx.tenant.org.id, actorUserId: ctx.tenant.userId, action: 'flaky.attempt', targetType: 'organisation', targetId: ctx.tenant.org.id });
    if (flaky.attempts === 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
    return flaky.attempts;
  }),
  // Writes, then fails: nothing of it may stay.
  writeThenFail: tenantProcedure('member').mutation(async ({ ctx }) => {
    await ctx.db.update(projects).set({ title: 'Written before a failure' });
    throw new AppError('BAD_REQUEST', 'validation.invalid');
  }),
  // Writes, commits, then fails: what was committed stays, and the portal's own connection works.
  commitThenFail: tenantProcedure('member').mutation(async ({ ctx }) => {
    await ctx.db.update(projects).set({ abstract: 'Committed before the failure.' });
    const db = await ctx.commit();
    await db.select({ id: projects.id }).from(projects);
    throw new AppError('BAD_REQUEST', 'validation.invalid');
  }),
});
const carelessCaller = createCallerFactory(carelessRouter);
const flaky = { attempts: 0 };

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
    for (const table of ['staff_roles', 'notifications', 'sessions', 'rate_limits', 'sim_cluster_state', 'sim_cluster_ops', 'sim_cluster_snapshots', 'sim_finished_jobs', 'document_counters', 'cluster_samples', 'scheduler_budget_syncs', 'auth_tokens', 'user_identities', 'centre_days', 'centre_tenant_days', 'centre_months', 'centre_tenant_months']) {
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

  it('FORCEs the policies on every tenant-owned table, so the tables’ owner passes only by the explicit policy of portal_service', async () => {
    const tenantOwned = ['organisations', 'memberships', 'invitations', 'projects', 'project_members', 'applications', 'application_lines', 'decisions', 'allocations', 'ledger_entries', 'jobs', 'job_events', 'usage_rollups', 'invoices', 'invoice_lines', 'credit_notes', 'audit_events', 'notifications', 'billing_profiles', 'credit_line_requests', 'user_identities', 'project_budgets', 'member_spend_limits', 'budget_alerts', 'invoice_payments', 'invoice_reminders', 'overdue_block_lifts', 'outside_jobs', 'storage_usage', 'storage_days'];
    const tables: unknown = await handle.db.execute(sql`select c.relname as name, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
        exists (select 1 from pg_policies p where p.tablename = c.relname and p.policyname = 'service_rows' and 'portal_service' = any(p.roles)) as service
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind = 'r'`);
    // PGlite answers { rows }, postgres.js the rows themselves.
    const rows = (tables && typeof tables === 'object' && 'rows' in tables ? tables.rows : tables) as { name: string; enabled: boolean; forced: boolean; service: boolean }[];
    for (const table of tenantOwned) expect(rows.find((r) => r.name === table), table).toMatchObject({ enabled: true, forced: true, service: true });
    // Not a tenant's, but behind the same wall: the mailed reset and verification links (drizzle/0032).
    expect(rows.find((r) => r.name === 'auth_tokens'), 'auth_tokens').toMatchObject({ enabled: true, forced: true, service: true });
    // And the centre's own planning: what-if runs (drizzle/0037).
    expect(rows.find((r) => r.name === 'what_if_runs'), 'what_if_runs').toMatchObject({ enabled: true, forced: true, service: true });
    // And the review panels, their conflicts of interest and the round panels (drizzle/0068).
    for (const table of ['review_assignments', 'review_conflicts', 'round_reviewers', 'allocation_reports']) expect(rows.find((r) => r.name === table), table).toMatchObject({ enabled: true, forced: true, service: true });
    // And the centre dashboard's rollups across tenants (drizzle/0061, 0062).
    for (const table of ['centre_days', 'centre_tenant_days', 'centre_months', 'centre_tenant_months']) expect(rows.find((r) => r.name === table), table).toMatchObject({ enabled: true, forced: true, service: true });
  });

  describe('writes', () => {
    const titlesOf = async (orgId: string) => (await handle.db.select({ title: projects.title, abstract: projects.abstract }).from(projects).where(eq(projects.orgId, orgId))).map((p) => p.title);
    /** The messages of an error and its causes (drizzle wraps the database's refusal). */
    const refusal = async (call: Promise<unknown>) => {
      const messages: string[] = [];
      for (let e: unknown = await call.then(() => undefined, (error: unknown) => error); e instanceof Error; e = e.cause) messages.push(e.message);
      return messages.join(' / ');
    };

    it('changes only the tenant’s own rows when a write forgot its tenant filter', async () => {
      const beforeB = await titlesOf(b.orgId);
      const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
      expect(new Set(await asA.renameEveryProject())).toEqual(new Set([a.orgId]));
      expect(await titlesOf(a.orgId)).toEqual(['Renamed by a careless write', 'Renamed by a careless write']);
      expect(await titlesOf(b.orgId)).toEqual(beforeB);
      const membersOfB = await handle.db.select().from(projectMembers).innerJoin(projects, eq(projects.id, projectMembers.projectId)).where(eq(projects.orgId, b.orgId));
      expect(membersOfB.length).toBeGreaterThan(0);
      expect(await asA.dropEveryProjectMember()).toBe(2);
      expect(await handle.db.select().from(projectMembers).innerJoin(projects, eq(projects.id, projectMembers.projectId)).where(eq(projects.orgId, b.orgId))).toHaveLength(membersOfB.length);
    });

    it('refuses rows written for another tenant, and columns a tenant may not change', async () => {
      const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
      expect(await refusal(asA.projectFor(b.orgId))).toMatch(/row-level security policy/);
      expect(await refusal(asA.moveProjectsTo(b.orgId))).toMatch(/row-level security policy/);
      expect(await refusal(asA.auditFor(b.orgId))).toMatch(/row-level security policy/);
      expect(await refusal(asA.notifyPerson(b.userId))).toMatch(/row-level security policy/);
      expect(await refusal(asA.creditRequestFor(b.orgId))).toMatch(/row-level security policy/);
      expect(await refusal(asA.activateTenant())).toMatch(/permission denied for table organisations/);
      expect(await handle.db.select({ id: projects.id }).from(projects).where(eq(projects.orgId, b.orgId))).toHaveLength(1);
      expect(await handle.db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.action, 'forged'))).toHaveLength(0);
      // Within the tenant the same writes are allowed: its own member may be told, its own row written.
      await asA.notifyPerson(a.userId);
      await asA.projectFor(a.orgId);
    });

    describe('money only through the service (issue #31)', () => {
      let allocationId: string;
      const balance = async () => (await handle.db.select({ granted: allocations.granted, charged: allocations.charged, reserved: allocations.reserved }).from(allocations).where(eq(allocations.id, allocationId)))[0];

      beforeAll(async () => {
        const staff = await createStaff(handle.db, 'admin');
        ({ allocationId } = await activeAllocation(handle.db, a, staff, { gpuHours: 10, today: new Date().toISOString().slice(0, 10) }));
      });

      it('refuses a tenant raising its own budget, minting ledger rows or an allocation, and moving its balance by hand', async () => {
        const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
        const before = await balance();
        expect(before).toEqual({ granted: 36_000, charged: 0, reserved: 0 });
        expect(await refusal(asA.raiseGranted(allocationId))).toMatch(/permission denied for table allocations/);
        expect(await refusal(asA.lowerReserved(allocationId))).toMatch(/permission denied for table allocations/);
        for (const kind of ['grant', 'refund', 'adjust', 'release', 'charge', 'expire']) {
          expect(await refusal(asA.appendEntry({ allocationId, kind, amount: 1_000_000 })), kind).toMatch(/row-level security policy/);
        }
        // A reservation is the tenant's own to write, but only of a positive amount: a negative one would free budget.
        expect(await refusal(asA.appendEntry({ allocationId, kind: 'reserve', amount: -1_000_000 }))).toMatch(/row-level security policy|ledger_entries_amount_ck/);
        const project = (await handle.db.select({ id: projects.id }).from(projects).where(eq(projects.orgId, a.orgId)))[0]!.id;
        expect(await refusal(asA.allocationFor(project))).toMatch(/permission denied for table allocations/);
        expect(await balance()).toEqual(before);
        expect(await handle.db.select({ id: allocations.id }).from(allocations).where(eq(allocations.orgId, a.orgId))).toHaveLength(1);
        // The one row it may write moves the cached balance with it, in the database (drizzle/0064): no UPDATE right needed.
        await asA.appendEntry({ allocationId, kind: 'reserve', amount: 100 });
        expect(await balance()).toEqual({ ...before, reserved: 100 });
      });

      it('keeps every allocation’s cached balance equal to its ledger’s sums', async () => {
        const drift: unknown = await handle.db.execute(sql`select a.id from allocations a left join ledger_entries l on l.allocation_id = a.id group by a.id
          having a.granted <> coalesce(sum(l.amount) filter (where l.kind in ('grant', 'adjust')), 0)
              or a.reserved <> coalesce(sum(l.amount) filter (where l.kind = 'reserve'), 0) - coalesce(sum(l.amount) filter (where l.kind = 'release'), 0)`);
        expect((drift && typeof drift === 'object' && 'rows' in drift ? drift.rows : drift) as unknown[]).toEqual([]);
      });

      it.runIf(target === 'postgres')('leaves a tenant’s login with nothing after an injected RESET ROLE, and no other role to become', async () => {
        const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
        expect(new Set(await asA.escapeAndRead('select 1'))).toEqual(new Set([a.orgId]));
        for (const escape of ['reset role', 'set role none', "select set_config('role', 'none', true)"]) {
          expect(await refusal(asA.escapeAndRead(escape)), escape).toMatch(/permission denied for table projects/);
        }
        for (const other of ['portal_service', 'postgres', new URL(process.env.TEST_DATABASE_URL!).username]) {
          expect(await refusal(asA.escapeAndRead(`set role ${other}`)), other).toMatch(/permission denied to set role|does not exist/);
        }
        // The login itself: no rights of its own, and it inherits none of portal_tenant's until it switches.
        const login: unknown = await handle.db.execute(sql`select rolinherit, rolsuper, rolbypassrls from pg_roles where rolname = ${TEST_AUTHENTICATOR}`);
        expect((login && typeof login === 'object' && 'rows' in login ? login.rows : login) as unknown[]).toEqual([{ rolinherit: false, rolsuper: false, rolbypassrls: false }]);
      });
    });

    it('runs a mutation that met contention again as a whole, keeping only the attempt that succeeded', async () => {
      flaky.attempts = 0;
      const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
      expect(await asA.flaky()).toBe(2);
      expect(await handle.db.select({ id: auditEvents.id }).from(auditEvents).where(eq(auditEvents.action, 'flaky.attempt'))).toHaveLength(1);
    });

    it('rolls back a mutation that fails, and keeps what it committed before failing', async () => {
      const asA = carelessCaller(createContextInner({ db: handle.db, userId: a.userId }));
      await expect(asA.writeThenFail()).rejects.toThrow();
      expect((await titlesOf(a.orgId)).filter((t) => t === 'Written before a failure')).toHaveLength(0);
      await expect(asA.commitThenFail()).rejects.toThrow();
      const abstracts = await handle.db.select({ abstract: projects.abstract }).from(projects).where(eq(projects.orgId, a.orgId));
      expect(abstracts.every((p) => p.abstract === 'Committed before the failure.')).toBe(true);
      const ofB = await handle.db.select({ abstract: projects.abstract }).from(projects).where(eq(projects.orgId, b.orgId));
      expect(ofB.every((p) => p.abstract !== 'Committed before the failure.')).toBe(true);
    });
  });
});
