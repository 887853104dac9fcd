// Integration-test harness: fresh migrated databases (PGlite always, real Postgres when
// TEST_DATABASE_URL is set), callers for any actor, and factories for tenants and people.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import type { Sql } from 'postgres';
import { and, desc, eq, like } from 'drizzle-orm';
import { migrateDb, MIGRATIONS_FOLDER, openDb, type Db, type DbHandle } from '~/db/client';
import { mailOutbox, memberships, staffRoles, users, type StaffRole } from '~/db/schema';
import { createCaller } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import type { ApiTokenAuth } from '~/server/core/rest/scopes';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import type { Locale } from '~/server/i18n';
import { DEFAULT_CATALOGUE } from '~/server/catalogue';
import { daysBetween } from '~/server/core/working-days';
import { signUp } from '~/server/services/identity/accounts';
import { syncCatalogue } from '~/server/services/catalogue';

export type TargetName = 'pglite' | 'postgres';

/** dbTargets lists the databases the integration tests run on. */
export function dbTargets(): TargetName[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/** openTestDb opens a new, empty, migrated database of the given kind (unmigrated with `migrate: false`); close() drops it. */
export async function openTestDb(target: TargetName, options: { migrate?: boolean } = {}): Promise<DbHandle> {
  const prepare = async (handle: DbHandle) => {
    if (options.migrate === false) return;
    await migrateDb(handle);
    await syncCatalogue(handle.db, DEFAULT_CATALOGUE);
  };
  if (target === 'pglite') {
    if (options.migrate === false) return openDb({ driver: 'pglite' });
    // A copy of one migrated database: loading it takes about a second, migrating about five.
    return openDb({ driver: 'pglite', loadDataDir: await migratedPgliteTemplate(prepare) });
  }
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const { default: postgres } = await import('postgres');
  const admin = postgres(adminUrl, { max: 1, onnotice: () => undefined });
  const name = `portal_test_${randomBytes(6).toString('hex')}`;
  const authenticator = await (testRoles ??= ensureTestRoles(admin));
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // Tenant calls log in as the authenticator, as a centre runs the portal (docs/deploy.md), when it could be made.
  const tenantUrl = authenticator ? Object.assign(new URL(url), { username: authenticator }).toString() : undefined;
  const handle = await openDb({ driver: 'postgres', url: url.toString(), max: 20, tenantUrl, tenantMax: 20 });
  await prepare(handle);
  const wrapped: DbHandle = {
    ...handle,
    close: async () => {
      await handle.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
  testUrls.set(wrapped, url.toString());
  return wrapped;
}

const testUrls = new WeakMap<DbHandle, string>();

/** The role tenant calls log in as in the Postgres tests (created here with LOGIN; drizzle/0065 lets it become portal_tenant). */
export const TEST_AUTHENTICATOR = 'portal_authenticator';

let testRoles: Promise<string | null> | undefined;

/**
 * ensureTestRoles creates the cluster's portal roles once per test process, before any migration: test files
 * migrating fresh databases at once would otherwise race to create them (a duplicate in pg_authid). Answers
 * the authenticator's name, or null when the test login may not create roles (tenant calls then share its login).
 */
async function ensureTestRoles(admin: Sql): Promise<string | null> {
  const create = async (statement: string) => {
    try {
      await admin.unsafe(statement);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== '42710' && code !== '23505') throw error; // it exists (or was created meanwhile)
    }
  };
  try {
    await create('create role portal_tenant nologin nobypassrls');
    await create('create role portal_service nologin nobypassrls');
    await create(`create role ${TEST_AUTHENTICATOR} login noinherit nobypassrls`);
    await admin.unsafe(`alter role ${TEST_AUTHENTICATOR} login noinherit`);
    return TEST_AUTHENTICATOR;
  } catch (error) {
    console.warn(`[tests] the roles could not be created as ${new URL(process.env.TEST_DATABASE_URL!).username}: tenant calls share its login`, error);
    return null;
  }
}

/**
 * migratedPgliteTemplate is the data directory of a PGlite database migrated and given the default catalogue,
 * made once per machine and state of the migrations, the catalogue (and the code writing it) and PGlite (the key of its file in the
 * temporary folder) and shared by every test file's worker: written to a temporary name and renamed, so a
 * worker reads a whole file or makes its own.
 */
async function migratedPgliteTemplate(prepare: (handle: DbHandle) => Promise<void>): Promise<Blob> {
  const hash = createHash('sha256');
  for (const name of fs.readdirSync(MIGRATIONS_FOLDER).sort()) if (name.endsWith('.sql')) hash.update(name).update(fs.readFileSync(path.join(MIGRATIONS_FOLDER, name)));
  hash.update(fs.readFileSync(path.join(MIGRATIONS_FOLDER, 'meta', '_journal.json')));
  hash.update(JSON.stringify(DEFAULT_CATALOGUE));
  // What writes the catalogue into the database, so a change there makes a new copy too.
  hash.update(fs.readFileSync(path.join(process.cwd(), 'server', 'services', 'catalogue.ts')));
  hash.update(fs.readFileSync(path.join(process.cwd(), 'node_modules', '@electric-sql', 'pglite', 'package.json')));
  const file = path.join(os.tmpdir(), `portal-test-pglite-${hash.digest('hex').slice(0, 20)}.tar`);
  if (!fs.existsSync(file)) {
    const handle = await openDb({ driver: 'pglite' });
    try {
      await prepare(handle);
      const dump = await (handle.db as unknown as { $client: { dumpDataDir(compression: 'none'): Promise<Blob> } }).$client.dumpDataDir('none');
      const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      fs.writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      fs.renameSync(partial, file);
      // Copies of earlier states (another migration, catalogue …) untouched for a day go: 40 MB each.
      for (const name of fs.readdirSync(os.tmpdir())) {
        const other = path.join(os.tmpdir(), name);
        if (/^portal-test-pglite-[0-9a-f]{20}\.tar$/.test(name) && other !== file && Date.now() - (fs.statSync(other, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 86_400_000) fs.rmSync(other, { force: true });
      }
    } finally {
      await handle.close();
    }
  }
  return new Blob([fs.readFileSync(file)]);
}

/** testDbUrl returns the URL of a real-Postgres test database, so a test can open a second process's connection pool on it. */
export function testDbUrl(handle: DbHandle): string {
  const url = testUrls.get(handle);
  if (!url) throw new Error('testDbUrl: not a real-Postgres test database');
  return url;
}

/** callerFor returns an API caller acting as a user (or anonymously) for an optional tenant. */
export function callerFor(db: Db, as: { userId?: string | null; orgId?: string; locale?: Locale; now?: () => Date; scheduler?: SchedulerPort; sessionId?: string; token?: ApiTokenAuth } = {}) {
  return createCaller(
    createContextInner({
      db,
      userId: as.token?.userId ?? as.userId ?? null,
      activeOrgId: as.orgId,
      ...(as.token ? { token: as.token } : {}),
      locale: as.locale ?? 'en',
      ...(as.now ? { now: as.now } : {}),
      ...(as.scheduler ? { scheduler: as.scheduler } : {}),
      ...(as.sessionId ? { sessionId: as.sessionId } : {}),
    }),
  );
}

let counter = 0;
function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${randomBytes(3).toString('hex')}`;
}

export const TEST_PASSWORD = 'correct-horse-battery';

/**
 * createTenant signs up an owner with a new organisation (company ones start pending verification); the
 * owner's e-mail address counts as verified, as if they had opened the link mailed to them.
 */
export async function createTenant(db: Db, options: { kind?: 'academic' | 'company'; name?: string } = {}) {
  const email = `${unique('owner')}@example.org`;
  const name = options.name ?? unique('Org');
  const result = await signUp(db, {
    name: 'Owner ' + name,
    email,
    password: TEST_PASSWORD,
    organisation: { name, kind: options.kind ?? 'academic', country: 'DE', residency: 'any' },
  }, { verified: true });
  return { ...result, email, orgName: name };
}

/** addMember invites a new person into a tenant with a role and has them accept. */
export async function addMember(db: Db, owner: { userId: string; orgId: string }, role: 'owner' | 'manager' | 'member' = 'member') {
  const email = `${unique(role)}@example.org`;
  const invitation = await callerFor(db, { userId: owner.userId, orgId: owner.orgId }).organisation.invite({ email, role });
  const token = invitation.path.split('/').pop()!;
  const result = await signUp(db, { name: `Person ${email}`, email, password: TEST_PASSWORD, invitationToken: token });
  return { userId: result.userId, orgId: owner.orgId, email };
}

/** createStaff creates a centre staff user with a role. */
export async function createStaff(db: Db, role: StaffRole) {
  const email = `${unique(role)}@centre.example`;
  const [user] = await db.insert(users).values({ email, name: `Staff ${role}`, passwordHash: 'x', emailVerifiedAt: new Date() }).returning({ id: users.id });
  await db.insert(staffRoles).values({ userId: user!.id, role });
  return { userId: user!.id, email };
}

/** accountOf returns the ids of a person who signed up through the API (which answers with no ids) and of their first tenant. */
export async function accountOf(db: Db, email: string): Promise<{ userId: string; orgId: string }> {
  const [row] = await db
    .select({ userId: users.id, orgId: memberships.orgId })
    .from(users)
    .innerJoin(memberships, eq(memberships.userId, users.id))
    .where(eq(users.email, email))
    .orderBy(memberships.createdAt)
    .limit(1);
  if (!row) throw new Error(`no account with a tenant for ${email}`);
  return row;
}

/** mailedLink finds the newest mail to an address in the outbox and the portal link under `path` in it. */
export async function mailedLink(db: Db, toAddress: string, path: '/verify-email/' | '/reset-password/'): Promise<{ url: string; token: string }> {
  const [mail] = await db
    .select({ text: mailOutbox.textBody })
    .from(mailOutbox)
    .where(and(eq(mailOutbox.toAddress, toAddress), like(mailOutbox.textBody, `%${path}%`)))
    .orderBy(desc(mailOutbox.id))
    .limit(1);
  const url = mail?.text.match(new RegExp(`https?://\\S+${path}([A-Za-z0-9_-]+)`));
  if (!url) throw new Error(`no mail with a ${path} link to ${toAddress}`);
  return { url: url[0], token: url[1]! };
}

/** confirmEmail opens the verification link mailed to an address, as its owner would after signing up. */
export async function confirmEmail(db: Db, email: string): Promise<void> {
  const { token } = await mailedLink(db, email, '/verify-email/');
  await callerFor(db).account.verifyEmail({ token });
}

/** userExists tells whether an e-mail has an account. */
export async function userExists(db: Db, email: string): Promise<boolean> {
  const rows = await db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return rows.length > 0;
}

/**
 * reviewedModeFor is the first reviewed access mode of the built-in catalogue a request of this size and
 * length fits (Fast Lane up to 50,000 GPU-h, Large Scale above), as an applicant would pick it.
 */
function reviewedModeFor(gpuHours: number, days: number): string {
  const mode = DEFAULT_CATALOGUE.accessModes.find((m) => m.reviewPath !== 'instant' && (m.maxGpuHours === null || gpuHours <= m.maxGpuHours) && (m.minGpuHours === null || gpuHours >= m.minGpuHours) && days <= m.durationDays);
  if (!mode) throw new Error(`activeAllocation: no reviewed access mode takes ${gpuHours} GPU-h over ${days} days`);
  return mode.id;
}

/** activeAllocation creates a project in a tenant and gives it an approved GPU-hour allocation through the API. */
export async function activeAllocation(
  db: Db,
  owner: { userId: string; orgId: string },
  reviewer: { userId: string },
  options: { gpuHours: number; resourceClassId?: string; today: string; periodEnd?: string; scheduler?: SchedulerPort },
) {
  const now = () => new Date(`${options.today}T12:00:00Z`);
  const scheduler = options.scheduler;
  const asOwner = callerFor(db, { userId: owner.userId, orgId: owner.orgId, now, scheduler });
  const project = await asOwner.project.create({ title: `Project ${unique('p')}`, abstract: 'A project for integration tests.', fieldOfScience: 'Computer science', members: [] });
  const end = options.periodEnd ?? new Date(Date.parse(`${options.today}T00:00:00Z`) + 80 * 86_400_000).toISOString().slice(0, 10);
  const app = await asOwner.application.create({
    projectId: project.id,
    accessModeId: reviewedModeFor(options.gpuHours, daysBetween(options.today, end)),
    periodStart: options.today,
    periodEnd: end,
    justification: 'We need GPU time to test the ledger thoroughly.',
    lines: [{ resourceClassId: options.resourceClassId ?? 'h100', gpuHours: options.gpuHours }],
  });
  await asOwner.application.submit({ applicationId: app.id });
  const decision = await callerFor(db, { userId: reviewer.userId, now, scheduler }).staff.decide({
    applicationId: app.id,
    outcome: 'approved',
    grantedLines: [{ resourceClassId: options.resourceClassId ?? 'h100', gpuHours: options.gpuHours }],
  });
  return { projectId: project.id, applicationId: app.id, allocationId: decision.allocationIds[0]! };
}

/** refusal awaits a call that must be refused and gives its code, message and the field the refusal names. */
export async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string; field?: string }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    const cause = error.cause as { field?: string } | undefined;
    return { code: error.code, message: error.message, ...(cause?.field ? { field: cause.field } : {}) };
  }
  throw new Error('the call was not refused');
}
