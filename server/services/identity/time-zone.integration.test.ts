// A person's time zone: chosen on the profile (an IANA name the runtime knows, refused otherwise with the
// field named), stored on the account, and used where times are written for them — here the expiry in
// the password-reset mail, which names the zone. On PGlite and real Postgres.
import { desc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { mailOutbox, users } from '~/db/schema';
import type { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { appRouter } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import { translate, type Locale } from '~/server/i18n';
import { callerFor, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

/** refusal is the error's code and the message on each field, as the browser receives them (through the router's own error formatter). */
async function refusal(call: Promise<unknown>, locale: Locale, db: Db) {
  try {
    await call;
  } catch (error) {
    const shape = getErrorShape({ config: appRouter._def._config, error: error as TRPCError, type: 'mutation', path: 'account.setTimeZone', input: undefined, ctx: createContextInner({ db, locale }) }) as { data: { code: string; fieldErrors?: Record<string, string> } };
    return { code: shape.data.code, fields: shape.data.fieldErrors };
  }
  throw new Error('expected a refusal');
}

describe.each(dbTargets())('the profile time zone on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
  });
  afterAll(async () => handle?.close());

  const zoneOf = async (userId: string) => (await db.select({ timeZone: users.timeZone }).from(users).where(eq(users.id, userId)))[0]?.timeZone;

  it('starts at Europe/Berlin, saves a zone the runtime knows and reports it back', async () => {
    const owner = await createTenant(db);
    const me = callerFor(db, { userId: owner.userId });
    expect((await me.account.me()).timeZone).toBe('Europe/Berlin');
    expect(await me.account.setTimeZone({ timeZone: 'America/New_York' })).toEqual({ timeZone: 'America/New_York' });
    expect((await callerFor(db, { userId: owner.userId }).account.me()).timeZone).toBe('America/New_York');
    expect(await zoneOf(owner.userId)).toBe('America/New_York');
    // A browser's alias of a listed zone is stored under the runtime's name for it.
    const alias = await me.account.setTimeZone({ timeZone: 'Asia/Kolkata' });
    expect(Intl.supportedValuesOf('timeZone')).toContain(alias.timeZone);
    expect(new Intl.DateTimeFormat('en', { timeZone: alias.timeZone, timeZoneName: 'longOffset' }).format(new Date('2026-12-03T12:00:00Z'))).toContain('GMT+05:30');
  });

  it.each(['Mars/Olympus', 'Europe/Berlin; drop table users', '', 'GMT+1', 'x'.repeat(100)])('refuses %j on the field, in the reader language, and keeps the zone', async (timeZone) => {
    const owner = await createTenant(db);
    for (const locale of ['en', 'de'] as const) {
      const refused = await refusal(callerFor(db, { userId: owner.userId, locale }).account.setTimeZone({ timeZone }), locale, db);
      expect(refused).toEqual({ code: 'BAD_REQUEST', fields: { timeZone: translate(locale, 'profile.timeZoneUnknown') } });
    }
    expect(await zoneOf(owner.userId)).toBe('Europe/Berlin');
  });

  it('the password-reset mail gives the link expiry in the person zone, naming it', async () => {
    const owner = await createTenant(db);
    await callerFor(db, { userId: owner.userId }).account.setTimeZone({ timeZone: 'America/New_York' });
    const now = new Date('2026-12-03T13:00:00Z');
    await callerFor(db, { now: () => now }).account.requestPasswordReset({ email: owner.email });
    const [mail] = await db.select().from(mailOutbox).where(eq(mailOutbox.toAddress, owner.email)).orderBy(desc(mailOutbox.id)).limit(1);
    expect(mail?.kind).toBe('password_reset');
    // The link lives an hour or more; whatever the lifetime, the expiry is written in New York time, as EST.
    expect(mail!.textBody).toMatch(/until Dec 3, 2026, \d{1,2}:\d{2}\s(AM|PM) EST\./);
    expect(mail!.textBody).not.toContain('UTC');
  });
});
