// The e-mail outbox against a real SMTP server (server/testing/smtp-sink.ts): a mail written in a
// transaction that rolls back is never sent; with the SMTP server down mails stay in the outbox and go
// out, each once, when it is back; two workers at once send each mail once; a keyed mail is written
// once; a tenant's transaction may add mails about its own tenant only. On PGlite and real Postgres.
import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DbHandle } from '~/db/client';
import { mailOutbox } from '~/db/schema';
import { createSmtpTransport } from '~/server/adapters/mail/smtp';
import { callerFor, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { startSmtpSink, type SmtpSink } from '~/server/testing/smtp-sink';
import { portalBaseUrl } from '~/server/env.js';
import { deliverDueMails, enqueueMail, type OutgoingMail } from './mail';
import { actAsTenant } from '~/server/services/transaction';

const FROM = 'GPU Centre <portal@centre.example>';

function mail(kind: string, to: string, extra: Partial<OutgoingMail> = {}): OutgoingMail {
  return { kind, toAddress: to, locale: 'en', subject: `Subject ${kind} ${to}`, text: `Hello ${to}, this is ${kind}.`, html: `<p>Hello ${to}, this is <b>${kind}</b>.</p>`, ...extra };
}

describe.each(dbTargets())('mail outbox on %s', (target) => {
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

  const rowsOf = (kind: string) => db.select().from(mailOutbox).where(eq(mailOutbox.kind, kind)).orderBy(mailOutbox.id);
  const receivedOf = (kind: string) => sink.received.filter((m) => m.subject.startsWith(`Subject ${kind} `));

  it('sends nothing of a transaction that rolled back', async () => {
    const kind = `rolled-back-${randomUUID().slice(0, 8)}`;
    await expect(
      db.transaction(async (tx) => {
        await enqueueMail(tx, [mail(kind, 'a@example.org')]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await rowsOf(kind)).toEqual([]);
  });

  it('keeps mails while the SMTP server is down and sends each once when it is back', async () => {
    const kind = `outage-${randomUUID().slice(0, 8)}`;
    const t0 = new Date('2026-12-01T10:00:00Z');
    await enqueueMail(db, ['p@example.org', 'q@example.org', 'r@example.org'].map((to) => mail(kind, to)), t0);
    await sink.stop();
    try {
      const down = await deliverDueMails(db, transport, { from: FROM, now: () => t0 });
      expect(down.sent).toBe(0);
      expect(down.retrying).toBe(3);
      const waiting = await rowsOf(kind);
      expect(waiting.map((r) => [r.status, r.attempts, r.nextAttemptAt.toISOString(), r.leaseUntil])).toEqual(Array(3).fill(['pending', 1, '2026-12-01T10:01:00.000Z', null]));
      expect(waiting.every((r) => r.lastError && r.lastError.length > 0)).toBe(true);
    } finally {
      await sink.start();
    }
    // Back, but the retry is not due yet: nothing goes out.
    await deliverDueMails(db, transport, { from: FROM, now: () => new Date('2026-12-01T10:00:30Z') });
    expect(receivedOf(kind)).toEqual([]);
    // Due: each mail once, to its recipient, from the portal's sender.
    const back = await deliverDueMails(db, transport, { from: FROM, now: () => new Date('2026-12-01T10:01:05Z'), limit: 100 });
    expect(back).toEqual({ sent: 3, retrying: 0, failed: 0 });
    const got = receivedOf(kind);
    expect(got.map((m) => m.to).sort()).toEqual([['p@example.org'], ['q@example.org'], ['r@example.org']]);
    expect(got[0]!.from).toBe('portal@centre.example');
    expect(got.find((m) => m.to[0] === 'p@example.org')!.text).toContain('Hello p@example.org, this is');
    const sent = await rowsOf(kind);
    expect(sent.map((r) => [r.status, r.attempts])).toEqual(Array(3).fill(['sent', 2]));
    expect(sent.every((r) => r.messageId && r.sentAt)).toBe(true);
    // Again: nothing more.
    await deliverDueMails(db, transport, { from: FROM, now: () => new Date('2026-12-01T10:30:00Z'), limit: 100 });
    expect(receivedOf(kind)).toHaveLength(3);
  });

  it('sends each mail once when two workers deliver at the same moment', async () => {
    const kind = `race-${randomUUID().slice(0, 8)}`;
    const t = new Date('2026-12-01T11:00:00Z');
    await enqueueMail(db, Array.from({ length: 10 }, (_, i) => mail(kind, `racer${i}@example.org`)), t);
    const at = () => t;
    await Promise.all([deliverDueMails(db, transport, { from: FROM, now: at, limit: 100 }), deliverDueMails(db, transport, { from: FROM, now: at, limit: 100 })]);
    const got = receivedOf(kind);
    expect(got).toHaveLength(10);
    expect(new Set(got.map((m) => m.to[0])).size).toBe(10);
    expect((await rowsOf(kind)).every((r) => r.status === 'sent' && r.attempts === 1)).toBe(true);
  });

  it('writes a keyed mail once, also from two transactions at once', async () => {
    const kind = `keyed-${randomUUID().slice(0, 8)}`;
    const key = `${kind}:user:2026-12-01`;
    await Promise.all([0, 1].map(() => db.transaction((tx) => enqueueMail(tx, [mail(kind, 'k@example.org', { dedupeKey: key })]))));
    await enqueueMail(db, [mail(kind, 'k@example.org', { dedupeKey: key })]);
    expect(await rowsOf(kind)).toHaveLength(1);
  });

  it('mails an invitation to the invited address, in the inviter’s language, with the link to accept it', async () => {
    const owner = await createTenant(db, { name: `Mail Institut ${randomUUID().slice(0, 6)}` });
    const email = `invited-${randomUUID().slice(0, 6)}@example.org`;
    const invitation = await callerFor(db, { userId: owner.userId, orgId: owner.orgId, locale: 'de' }).organisation.invite({ email, role: 'member' });
    const [row] = await db.select().from(mailOutbox).where(eq(mailOutbox.toAddress, email));
    expect(row).toMatchObject({ kind: 'invitation', orgId: owner.orgId, locale: 'de', status: 'pending' });
    await deliverDueMails(db, transport, { from: FROM, now: () => new Date(Date.now() + 60_000), limit: 100 });
    const got = sink.received.filter((m) => m.to[0] === email);
    expect(got).toHaveLength(1);
    expect(got[0]!.subject).toBe(`Owner ${owner.orgName} lädt Sie zu ${owner.orgName} im AI-Factory-Portal ein`);
    expect(got[0]!.text).toContain(`als Mitglied`);
    expect(got[0]!.text).toContain(`Einladung annehmen: ${portalBaseUrl()}${invitation.path}`);
    expect(got[0]!.html).toContain(`href="${portalBaseUrl()}${invitation.path}"`);
  });

  it('lets a tenant’s transaction add mails about its own tenant only', async () => {
    const a = await createTenant(db);
    const b = await createTenant(db);
    const kind = `tenant-${randomUUID().slice(0, 8)}`;
    await db.transaction(async (tx) => {
      await actAsTenant(tx, a.orgId, 'write');
      await enqueueMail(tx, [mail(kind, 'invitee@example.org', { orgId: a.orgId })]);
    });
    await expect(
      db.transaction(async (tx) => {
        await actAsTenant(tx, a.orgId, 'write');
        await enqueueMail(tx, [mail(kind, 'other@example.org', { orgId: b.orgId })]);
      }),
    ).rejects.toThrow();
    // Nor another tenant's person, nor a mail about no tenant.
    await expect(
      db.transaction(async (tx) => {
        await actAsTenant(tx, a.orgId, 'write');
        await enqueueMail(tx, [mail(kind, 'b-owner@example.org', { orgId: a.orgId, toUserId: b.userId })]);
      }),
    ).rejects.toThrow();
    const rows = await db.select({ toAddress: mailOutbox.toAddress, orgId: mailOutbox.orgId }).from(mailOutbox).where(inArray(mailOutbox.kind, [kind]));
    expect(rows).toEqual([{ toAddress: 'invitee@example.org', orgId: a.orgId }]);
  });
});
