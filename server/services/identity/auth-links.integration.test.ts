// Password reset and e-mail verification through the API, with the mails delivered by the worker's
// delivery to a real SMTP server (server/testing/smtp-sink.ts) and read as a mail client reads them:
// one answer for known and unknown addresses, links stored only as hashes, used once, the newest only,
// expiring; a reset ends every session; an unverified person's tenant may read but not act until the
// mailed link is opened. On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { auditEvents, authTokens, mailOutbox, users } from '~/db/schema';
import { createSmtpTransport } from '~/server/adapters/mail/smtp';
import type { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { appRouter, createCaller } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import { portalBaseUrl } from '~/server/env.js';
import { RATE_RULES } from '~/server/core/rate-limits';
import { accountOf, addMember, callerFor, createTenant, dbTargets, openTestDb, TEST_PASSWORD } from '~/server/testing/harness';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '~/server/testing/smtp-sink';
import { loadCaller, verifyCredentials } from './accounts';
import { hashAuthToken } from './auth-tokens';
import { deliverDueMails } from '~/server/services/mail/mail';
import { RESET_ANSWER_MS } from './password-reset';
import { startSession } from './sessions';

const FROM = 'GPU Centre <portal@centre.example>';
const NEW_PASSWORD = 'a-brand-new-passphrase';

/** outcome is "OK" or the refusal's code and message, as the person would see it. */
const outcome = (call: Promise<unknown>) => call.then(() => 'OK', (error: { code?: string; message: string }) => `${error.code}: ${error.message}`);

describe.each(dbTargets())('password reset and e-mail verification on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let sink: SmtpSink;
  let transport: ReturnType<typeof createSmtpTransport>;
  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    sink = await startSmtpSink();
    transport = createSmtpTransport(sink.url);
  });
  afterAll(async () => {
    transport?.close();
    await sink?.stop();
    await handle?.close();
  });

  /** deliver runs the worker's delivery and returns what reached the SMTP server for an address. */
  async function delivered(to: string): Promise<ReceivedMail[]> {
    await deliverDueMails(db, transport, { from: FROM, limit: 100 });
    return sink.received.filter((m) => m.to.includes(to));
  }
  const linkIn = (mail: ReceivedMail, path: string) => {
    const match = mail.text.match(new RegExp(`${portalBaseUrl()}${path}([A-Za-z0-9_-]+)`));
    if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
    return match[1]!;
  };
  const at = (iso: string) => () => new Date(iso);

  describe('password reset', () => {
    it('mails a link to a known address, stores only its hash, and the link sets a new password once', async () => {
      const owner = await createTenant(db);
      const asked = await callerFor(db).account.requestPasswordReset({ email: owner.email.toUpperCase() });
      expect(asked).toEqual({ sent: true });
      const [mail, ...more] = await delivered(owner.email);
      expect(more).toEqual([]);
      expect(mail!.subject).toBe('Reset your password for the AI Factory Portal');
      const token = linkIn(mail!, '/reset-password/');
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
      expect(mail!.html).toContain(`href="${portalBaseUrl()}/reset-password/${token}"`);

      // Only the hash is kept: nothing in the table or the audit log holds the token itself.
      const [stored] = await db.select().from(authTokens).where(eq(authTokens.userId, owner.userId));
      expect(stored).toMatchObject({ purpose: 'password_reset', tokenHash: hashAuthToken(token), usedAt: null });
      expect(JSON.stringify(await db.select().from(authTokens))).not.toContain(token);
      expect(JSON.stringify(await db.select().from(auditEvents))).not.toContain(token);

      expect(await callerFor(db).account.resetLinkUsable({ token })).toBe(true);
      expect(await callerFor(db).account.resetPassword({ token, password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD })).toEqual({ email: owner.email });
      expect(await verifyCredentials(db, owner.email, NEW_PASSWORD)).toMatchObject({ id: owner.userId });
      expect(await verifyCredentials(db, owner.email, TEST_PASSWORD)).toBeNull();

      // Single use: the same link again is refused, with the sentence the page shows.
      expect(await callerFor(db).account.resetLinkUsable({ token })).toBe(false);
      expect(await outcome(callerFor(db).account.resetPassword({ token, password: 'yet-another-passphrase', passwordConfirm: 'yet-another-passphrase' }))).toBe(
        'NOT_FOUND: This link no longer works — ask for a new one.',
      );
      expect(await verifyCredentials(db, owner.email, NEW_PASSWORD)).toMatchObject({ id: owner.userId });
      const audit = await db.select({ action: auditEvents.action }).from(auditEvents).where(eq(auditEvents.targetId, owner.userId));
      expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['account.password_reset_requested', 'account.password_reset']));
    });

    it('lets an account made through single sign-on set its first password by the mailed link', async () => {
      const owner = await createTenant(db);
      await db.update(users).set({ passwordHash: null }).where(eq(users.id, owner.userId));
      const me = callerFor(db, { userId: owner.userId });
      expect(await me.account.hasPassword()).toBe(false);
      await callerFor(db).account.requestPasswordReset({ email: owner.email });
      const [mail] = await delivered(owner.email);
      const token = linkIn(mail!, '/reset-password/');
      await callerFor(db).account.resetPassword({ token, password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD });
      expect(await verifyCredentials(db, owner.email, NEW_PASSWORD)).toMatchObject({ id: owner.userId });
      expect(await me.account.hasPassword()).toBe(true);
    });

    it('gives an unknown address the same answer in about the same time, and mails nothing', async () => {
      const owner = await createTenant(db);
      const nobody = `nobody-${randomUUID().slice(0, 8)}@example.org`;
      const timed = async (email: string) => {
        const started = performance.now();
        const answer = await callerFor(db).account.requestPasswordReset({ email });
        return { answer, ms: performance.now() - started };
      };
      const known = await timed(owner.email);
      const unknown = await timed(nobody);
      expect(unknown.answer).toEqual(known.answer);
      // Both are held to the same floor, which is well above the work either does.
      expect(known.ms).toBeGreaterThanOrEqual(RESET_ANSWER_MS - 5);
      expect(unknown.ms).toBeGreaterThanOrEqual(RESET_ANSWER_MS - 5);
      expect(Math.abs(known.ms - unknown.ms)).toBeLessThan(RESET_ANSWER_MS);
      expect(await db.select().from(mailOutbox).where(eq(mailOutbox.toAddress, nobody))).toEqual([]);
      expect(await delivered(nobody)).toEqual([]);
    });

    it('refuses a link an hour after it was sent, and every link but the newest', async () => {
      const owner = await createTenant(db);
      const first = at('2026-12-01T10:00:00Z');
      await callerFor(db, { now: first }).account.requestPasswordReset({ email: owner.email });
      const firstToken = linkIn((await delivered(owner.email)).at(-1)!, '/reset-password/');
      const reset = (token: string, now: () => Date) => outcome(callerFor(db, { now }).account.resetPassword({ token, password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD }));
      expect(await reset(firstToken, at('2026-12-01T11:00:00Z'))).toBe('NOT_FOUND: This link no longer works — ask for a new one.');

      await callerFor(db, { now: at('2026-12-01T11:00:00Z') }).account.requestPasswordReset({ email: owner.email });
      const secondToken = linkIn((await delivered(owner.email)).at(-1)!, '/reset-password/');
      await callerFor(db, { now: at('2026-12-01T11:01:00Z') }).account.requestPasswordReset({ email: owner.email });
      const thirdToken = linkIn((await delivered(owner.email)).at(-1)!, '/reset-password/');
      expect(new Set([firstToken, secondToken, thirdToken]).size).toBe(3);
      // A newer request voided the second link although it had 59 minutes left.
      expect(await reset(secondToken, at('2026-12-01T11:02:00Z'))).toBe('NOT_FOUND: This link no longer works — ask for a new one.');
      expect(await reset(thirdToken, at('2026-12-01T12:00:59Z'))).toBe('OK');
      expect(await verifyCredentials(db, owner.email, NEW_PASSWORD)).toMatchObject({ id: owner.userId });
    });

    it('names a mismatched or short new password on its field and keeps the link usable', async () => {
      const owner = await createTenant(db);
      await callerFor(db).account.requestPasswordReset({ email: owner.email });
      const token = linkIn((await delivered(owner.email)).at(-1)!, '/reset-password/');
      // The refusal as the browser receives it: through the router's own error formatter.
      const fields = (call: Promise<unknown>) =>
        call.then(
          () => undefined,
          (error: TRPCError) =>
            (getErrorShape({ config: appRouter._def._config, error, type: 'mutation', path: 'account.resetPassword', input: undefined, ctx: createContextInner({ db }) }) as { data: { fieldErrors?: Record<string, string> } }).data.fieldErrors,
        );
      expect(await fields(callerFor(db).account.resetPassword({ token, password: NEW_PASSWORD, passwordConfirm: 'something-else-entirely' }))).toEqual({
        passwordConfirm: 'The two passwords differ. Type the same new password twice.',
      });
      expect(await fields(callerFor(db).account.resetPassword({ token, password: 'short', passwordConfirm: 'short' }))).toEqual({ password: 'Use at least 10 characters.' });
      expect(await callerFor(db).account.resetLinkUsable({ token })).toBe(true);
    });

    it('ends every session of the person, and the reset counts as verifying the address', async () => {
      await callerFor(db).account.signUp({ name: 'Rita Reset', email: 'rita@reset.example', password: TEST_PASSWORD, organisation: { name: `Reset Lab ${randomUUID().slice(0, 6)}`, kind: 'academic', country: 'DE', residency: 'any' } });
      const rita = await accountOf(db, 'rita@reset.example');
      const laptop = await startSession(db, rita.userId, { userAgent: 'laptop' });
      const phone = await startSession(db, rita.userId, { userAgent: 'phone' });
      expect(await loadCaller(db, rita.userId, laptop)).toMatchObject({ emailVerified: false });

      await callerFor(db, { locale: 'de' }).account.requestPasswordReset({ email: 'rita@reset.example' });
      const mail = (await delivered('rita@reset.example')).find((m) => m.text.includes('/reset-password/'))!;
      // The person chose no language: the mail is in the request's.
      expect(mail.subject).toBe('Passwort für das AI Factory Portal zurücksetzen');
      await callerFor(db).account.resetPassword({ token: linkIn(mail, '/reset-password/'), password: NEW_PASSWORD, passwordConfirm: NEW_PASSWORD });

      expect(await loadCaller(db, rita.userId, laptop)).toBeUndefined();
      expect(await loadCaller(db, rita.userId, phone)).toBeUndefined();
      expect(await loadCaller(db, rita.userId)).toMatchObject({ emailVerified: true });
      // The verification link mailed at sign-up is not needed any more.
      const open = await db.select().from(authTokens).where(and(eq(authTokens.userId, rita.userId), sql`${authTokens.usedAt} is null and ${authTokens.voidedAt} is null`));
      expect(open).toEqual([]);
    });

    it('writes the mail in the language the person chose', async () => {
      const owner = await createTenant(db);
      await db.update(users).set({ locale: 'de' }).where(eq(users.id, owner.userId));
      await callerFor(db, { locale: 'en' }).account.requestPasswordReset({ email: owner.email });
      const mail = (await delivered(owner.email)).at(-1)!;
      expect(mail.subject).toBe('Passwort für das AI Factory Portal zurücksetzen');
      expect(mail.text).toContain('Neues Passwort wählen: ');
    });

    it('limits requests per e-mail address and per client address, with the same refusal for known and unknown addresses', async () => {
      const owner = await createTenant(db);
      const limited = (address: string) => createCaller(createContextInner({ db, limits: true, address, locale: 'en' }));
      const nobody = `nobody-${randomUUID().slice(0, 8)}@example.org`;
      const answers = async (email: string, address: string) => {
        const seen: string[] = [];
        for (let i = 0; i <= RATE_RULES.passwordResetEmail.limit; i++) seen.push(await outcome(limited(address).account.requestPasswordReset({ email })));
        return seen;
      };
      const knownAnswers = await answers(owner.email, '192.0.2.1');
      const unknownAnswers = await answers(nobody, '192.0.2.2');
      expect(knownAnswers.slice(0, -1).every((a) => a === 'OK')).toBe(true);
      expect(knownAnswers.at(-1)).toBe('TOO_MANY_REQUESTS: Too many tries in a short time. Please wait 60 minutes and try again.');
      expect(unknownAnswers).toEqual(knownAnswers);
      // Only the allowed requests wrote a link (and voided the one before).
      expect(await db.select().from(authTokens).where(eq(authTokens.userId, owner.userId))).toHaveLength(RATE_RULES.passwordResetEmail.limit);

      // One client address asking for many different addresses is stopped too.
      const flood: string[] = [];
      for (let i = 0; i <= RATE_RULES.passwordResetAddress.limit; i++) flood.push(await outcome(limited('192.0.2.3').account.requestPasswordReset({ email: `flood-${i}@example.org` })));
      expect(flood.at(-1)).toMatch(/^TOO_MANY_REQUESTS: /);
      expect(flood.slice(0, -1).every((a) => a === 'OK')).toBe(true);
    }, 60_000);
  });

  describe('e-mail verification', () => {
    const newProject = { title: 'Verified project', abstract: 'Made once the address is confirmed.', fieldOfScience: 'Physics' };

    it('lets a new sign-up read but not act until the mailed link is opened, then act', async () => {
      const email = `vera-${randomUUID().slice(0, 8)}@verify.example`;
      await callerFor(db).account.signUp({ name: 'Vera Verify', email, password: TEST_PASSWORD, organisation: { name: `Verify Lab ${randomUUID().slice(0, 6)}`, kind: 'academic', country: 'DE', residency: 'any' } });
      const vera = await accountOf(db, email);
      const [row] = await db.select({ verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.id, vera.userId));
      expect(row!.verifiedAt).toBeNull();
      const asVera = callerFor(db, { userId: vera.userId });
      expect((await asVera.account.me()).emailVerified).toBe(false);

      expect(await outcome(asVera.project.create(newProject))).toBe(
        `PRECONDITION_FAILED: Confirm your e-mail address first: we sent a link to ${email}. Open it, or send it again from the banner at the top of the page; until then you can look around but not change anything.`,
      );
      expect(await outcome(callerFor(db, { userId: vera.userId, locale: 'de' }).organisation.invite({ email: 'x@verify.example', role: 'member' }))).toMatch(/^PRECONDITION_FAILED: Bestätigen Sie zuerst Ihre E-Mail-Adresse/);
      // Reads still work.
      expect(await asVera.project.list()).toEqual(expect.any(Array));
      expect((await asVera.organisation.current()).id).toBe(vera.orgId);

      const [mail, ...more] = await delivered(email);
      expect(more).toEqual([]);
      expect(mail!.subject).toBe('Confirm your e-mail address for the AI Factory Portal');
      const token = linkIn(mail!, '/verify-email/');
      // Looking at the link (its page, a mail scanner) uses nothing: only the confirmation does.
      expect(await callerFor(db).account.verificationLinkUsable({ token })).toBe(true);
      expect(await callerFor(db).account.verificationLinkUsable({ token })).toBe(true);
      expect((await asVera.account.me()).emailVerified).toBe(false);
      expect(await callerFor(db).account.verifyEmail({ token })).toEqual({ email });
      expect((await asVera.account.me()).emailVerified).toBe(true);
      expect(await callerFor(db).account.verificationLinkUsable({ token })).toBe(false);
      expect(await outcome(asVera.project.create(newProject))).toBe('OK');
      // Single use.
      expect(await outcome(callerFor(db).account.verifyEmail({ token }))).toBe('NOT_FOUND: This link no longer works — ask for a new one.');
    });

    it('sends the link again on request (the old one stops working), and nothing once verified', async () => {
      const email = `resend-${randomUUID().slice(0, 8)}@verify.example`;
      await callerFor(db).account.signUp({ name: 'Rene Resend', email, password: TEST_PASSWORD, organisation: { name: `Resend Lab ${randomUUID().slice(0, 6)}`, kind: 'academic', country: 'DE', residency: 'any' } });
      const rene = await accountOf(db, email);
      const first = linkIn((await delivered(email)).at(-1)!, '/verify-email/');
      expect(await callerFor(db, { userId: rene.userId }).account.resendVerification()).toEqual({ sent: true, email });
      const second = linkIn((await delivered(email)).at(-1)!, '/verify-email/');
      expect(second).not.toBe(first);
      expect(await outcome(callerFor(db).account.verifyEmail({ token: first }))).toBe('NOT_FOUND: This link no longer works — ask for a new one.');
      await callerFor(db).account.verifyEmail({ token: second });
      expect(await callerFor(db, { userId: rene.userId }).account.resendVerification()).toEqual({ sent: false, email });
      expect(await delivered(email)).toHaveLength(2);

      // "Send again" is limited per person.
      const limited = createCaller(createContextInner({ db, userId: rene.userId, limits: true }));
      for (let i = 0; i < RATE_RULES.verificationResend.limit; i++) await limited.account.resendVerification();
      expect(await outcome(limited.account.resendVerification())).toMatch(/^TOO_MANY_REQUESTS: /);
    });

    it('refuses a verification link after seven days', async () => {
      const email = `late-${randomUUID().slice(0, 8)}@verify.example`;
      await callerFor(db, { now: at('2026-12-01T10:00:00Z') }).account.signUp({ name: 'Lena Late', email, password: TEST_PASSWORD, organisation: { name: `Late Lab ${randomUUID().slice(0, 6)}`, kind: 'academic', country: 'DE', residency: 'any' } });
      const token = linkIn((await delivered(email)).at(-1)!, '/verify-email/');
      expect(await outcome(callerFor(db, { now: at('2026-12-08T10:00:00Z') }).account.verifyEmail({ token }))).toBe('NOT_FOUND: This link no longer works — ask for a new one.');
      expect(await outcome(callerFor(db, { now: at('2026-12-08T09:59:00Z') }).account.verifyEmail({ token }))).toBe('OK');
    });

    it('counts joining by an invitation mailed to the address as verified, and sends no verification mail', async () => {
      const owner = await createTenant(db);
      const member = await addMember(db, owner, 'member');
      expect(await loadCaller(db, member.userId)).toMatchObject({ emailVerified: true });
      expect(await db.select().from(mailOutbox).where(and(eq(mailOutbox.toAddress, member.email), eq(mailOutbox.kind, 'email_verification')))).toEqual([]);
      expect(await outcome(callerFor(db, { userId: member.userId }).project.create(newProject))).toBe('OK');
    });

    it('keeps the verification state of a known account that signs up again with its own password', async () => {
      const email = `again-${randomUUID().slice(0, 8)}@verify.example`;
      const form = (org: string) => ({ name: 'Alma Again', email, password: TEST_PASSWORD, organisation: { name: `${org} ${randomUUID().slice(0, 6)}`, kind: 'academic' as const, country: 'DE', residency: 'any' as const } });
      await callerFor(db).account.signUp(form('First Lab'));
      const alma = await accountOf(db, email);
      await callerFor(db).account.signUp(form('Second Lab'));
      expect(await loadCaller(db, alma.userId)).toMatchObject({ emailVerified: false });
      await callerFor(db).account.verifyEmail({ token: linkIn((await delivered(email)).at(-1)!, '/verify-email/') });
      await callerFor(db).account.signUp(form('Third Lab'));
      const caller = await loadCaller(db, alma.userId);
      expect(caller).toMatchObject({ emailVerified: true });
      expect(caller!.tenants).toHaveLength(3);
      // One verification mail: the later sign-ups wrote none.
      expect((await delivered(email)).filter((m) => m.text.includes('/verify-email/'))).toHaveLength(1);
    });
  });
});
