// The staff audit log (issue #24): newest first by the time each row records — also when the demo's
// replayed history wrote old rows after new ones — filtered by tenant, kind and period, page by page.
import { TRPCError } from '@trpc/server';
import { getErrorShape } from '@trpc/server/unstable-core-do-not-import';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '~/db/client';
import { appRouter } from '~/server/api/root';
import { createContextInner } from '~/server/api/trpc';
import { encodeAuditCursor } from '~/server/core/audit';
import { recordAudit } from '~/server/services/audit';
import { atReplayedTime } from '~/server/services/replay-clock';
import { callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';

/** refusal renders a refused call the way the HTTP handler does: its code and its messages per field. */
async function refusal(handle: DbHandle, promise: Promise<unknown>): Promise<{ code: string; fields: Record<string, string> }> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    const shape = getErrorShape({ config: appRouter._def._config, error, type: 'query', path: 'staff.audit', input: undefined, ctx: createContextInner({ db: handle.db, locale: 'en' }) }) as {
      data: { fieldErrors?: Record<string, string> };
      message: string;
    };
    return { code: error.code, fields: shape.data.fieldErrors ?? { _: shape.message } };
  }
  throw new Error('expected a refusal');
}

describe.each(dbTargets())('staff audit log on %s', (target) => {
  let handle: DbHandle;
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let staff: ReturnType<typeof callerFor>;

  beforeAll(async () => {
    handle = await openTestDb(target);
    a = await createTenant(handle.db, { name: 'Audit A', kind: 'company' });
    b = await createTenant(handle.db, { name: 'Audit B', kind: 'company' });
    const admin = await createStaff(handle.db, 'admin');
    staff = callerFor(handle.db, { userId: admin.userId });
    // A live row first, then a replayed history dated months back (written later, so with higher ids).
    await recordAudit(handle.db, { actorUserId: a.userId, orgId: a.orgId, action: 'credit.requested', targetType: 'organisation', targetId: a.orgId });
    for (const [day, orgId] of [['2026-03-02', a.orgId], ['2026-03-01', b.orgId], ['2026-04-15', a.orgId]] as const) {
      await atReplayedTime(new Date(`${day}T09:00:00Z`), () => recordAudit(handle.db, { actorUserId: null, orgId, action: 'billing.price_list_accepted', targetType: 'organisation', targetId: orgId }));
    }
  });
  afterAll(async () => handle?.close());

  it('lists rows newest first by their time, not by the order they were written', async () => {
    const rows = await staff.staff.audit({ limit: 500 });
    const times = rows.map((row) => row.at.getTime());
    expect(times).toEqual([...times].sort((x, y) => y - x));
    const mine = rows.filter((row) => row.action === 'billing.price_list_accepted').map((row) => row.at.toISOString().slice(0, 10));
    expect(mine).toEqual(['2026-04-15', '2026-03-02', '2026-03-01']);
    expect(rows[0]!.action).not.toBe('billing.price_list_accepted');
  });

  it('filters by tenant, kind and period (the end day included)', async () => {
    const ofA = await staff.staff.audit({ orgId: a.orgId, action: 'billing.price_list_accepted', limit: 500 });
    expect(ofA.map((row) => row.at.toISOString().slice(0, 10))).toEqual(['2026-04-15', '2026-03-02']);
    const march = await staff.staff.audit({ action: 'billing.price_list_accepted', from: '2026-03-01', to: '2026-03-02', limit: 500 });
    expect(march.map((row) => row.orgName)).toEqual(['Audit A', 'Audit B']);
    expect(await staff.staff.audit({ action: 'credit.raised', limit: 500 })).toEqual([]);
  });

  it('pages through the log without skipping or repeating a row', async () => {
    const all = await staff.staff.audit({ limit: 500 });
    const seen: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await staff.staff.audit({ limit: 2, cursor });
      seen.push(...page.map((row) => row.id));
      const last = page[page.length - 1];
      if (page.length < 2 || !last) break;
      cursor = encodeAuditCursor({ at: last.at, id: last.id });
    }
    expect(seen).toEqual(all.map((row) => row.id));
  });

  it('refuses a period that ends before it starts, an unknown kind and a forged cursor, naming the field', async () => {
    expect(await refusal(handle, staff.staff.audit({ from: '2026-03-02', to: '2026-03-01', limit: 10 }))).toEqual({ code: 'BAD_REQUEST', fields: { to: 'The end of the period must not be before its start.' } });
    const kind = await refusal(handle, staff.staff.audit({ action: 'forged' as never, limit: 10 }));
    expect([kind.code, Object.keys(kind.fields)]).toEqual(['BAD_REQUEST', ['action']]);
    const cursor = await refusal(handle, staff.staff.audit({ cursor: 'hello', limit: 10 }));
    expect([cursor.code, Object.keys(cursor.fields)]).toEqual(['BAD_REQUEST', ['cursor']]);
  });
});
