import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyEntry, available, balanceOf, EMPTY_BALANCE, settleAmounts, usedPermille, type Balance, type LedgerEntryValue } from './balance';

describe('applyEntry', () => {
  const granted: Balance = { ...EMPTY_BALANCE, granted: 1000 };
  it.each([
    [{ kind: 'reserve', amount: 400 }, { reserved: 400 }],
    [{ kind: 'adjust', amount: -300 }, { granted: 700 }],
    [{ kind: 'adjust', amount: 500 }, { granted: 1500 }],
    [{ kind: 'charge', amount: 250 }, { charged: 250 }],
    [{ kind: 'expire', amount: 1000 }, { expired: 1000 }],
  ] as const)('%o changes %o', (entry, change) => {
    const result = applyEntry(granted, entry);
    expect(result).toEqual({ ok: true, balance: { ...granted, ...change } });
  });

  it.each([
    [{ kind: 'reserve', amount: 1001 }, { reason: 'insufficient', needed: 1001, available: 1000 }],
    [{ kind: 'reserve', amount: 0 }, { reason: 'notPositive' }],
    [{ kind: 'reserve', amount: -5 }, { reason: 'notPositive' }],
    [{ kind: 'grant', amount: 1.5 }, { reason: 'notInteger' }],
    [{ kind: 'release', amount: 1 }, { reason: 'releaseExceedsReserved', reserved: 0 }],
    [{ kind: 'refund', amount: 1 }, { reason: 'refundExceedsCharged', charged: 0 }],
    [{ kind: 'adjust', amount: -1001 }, { reason: 'adjustBelowUsed', used: 0 }],
    [{ kind: 'expire', amount: 1001 }, { reason: 'insufficient', needed: 1001, available: 1000 }],
  ] as const)('refuses %o', (entry, refusal) => {
    expect(applyEntry(granted, entry)).toEqual({ ok: false, refusal });
  });

  it('refuses an adjustment below what is reserved and charged', () => {
    const b = balanceOf([{ kind: 'grant', amount: 1000 }, { kind: 'reserve', amount: 300 }, { kind: 'charge', amount: 200 }]);
    expect(applyEntry(b, { kind: 'adjust', amount: -600 })).toEqual({ ok: false, refusal: { reason: 'adjustBelowUsed', used: 500 } });
    expect(applyEntry(b, { kind: 'adjust', amount: -500 }).ok).toBe(true);
  });
});

describe('settleAmounts', () => {
  it.each([
    [3600, 1800, { release: 3600, charge: 1800, unused: 1800, overrun: 0 }],
    [3600, 3600, { release: 3600, charge: 3600, unused: 0, overrun: 0 }],
    [3600, 4000, { release: 3600, charge: 4000, unused: 0, overrun: 400 }],
    [3600, 0, { release: 3600, charge: 0, unused: 3600, overrun: 0 }],
  ])('reserved %i, used %i → %o', (reserved, actual, expected) => {
    expect(settleAmounts(reserved, actual)).toEqual(expected);
  });

  it('lets an overrun drive available below zero while flagging it', () => {
    const b = balanceOf([
      { kind: 'grant', amount: 1000 },
      { kind: 'reserve', amount: 1000 },
      { kind: 'release', amount: 1000 },
      { kind: 'charge', amount: 1100, overrun: 100 },
    ]);
    expect(available(b)).toBe(-100);
    expect(b.overrun).toBe(100);
    expect(applyEntry(b, { kind: 'reserve', amount: 1 }).ok).toBe(false);
  });
});

describe('usedPermille', () => {
  it.each([
    [1000, 799, 799],
    [1000, 800, 800],
    [3, 1, 333],
    [0, 0, 0],
  ])('granted %i, charged %i → %i ‰', (granted, charged, expected) => {
    expect(usedPermille({ ...EMPTY_BALANCE, granted, charged })).toBe(expected);
  });
});

// Random sequences of operations as the services issue them: jobs reserve, then either settle
// (release + charge) or are cancelled (release); staff grant, adjust and refund; expiry at the end.
type Op =
  | { op: 'grant'; amount: number }
  | { op: 'reserve'; amount: number }
  | { op: 'settle'; job: number; actual: number }
  | { op: 'cancel'; job: number }
  | { op: 'adjust'; amount: number }
  | { op: 'refund'; amount: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('grant' as const), amount: fc.integer({ min: 1, max: 1e6 }) }),
  fc.record({ op: fc.constant('reserve' as const), amount: fc.integer({ min: 1, max: 5e5 }) }),
  fc.record({ op: fc.constant('settle' as const), job: fc.nat(), actual: fc.integer({ min: 0, max: 5e5 }) }),
  fc.record({ op: fc.constant('cancel' as const), job: fc.nat() }),
  fc.record({ op: fc.constant('adjust' as const), amount: fc.integer({ min: -5e5, max: 5e5 }) }),
  fc.record({ op: fc.constant('refund' as const), amount: fc.integer({ min: 1, max: 1e5 }) }),
);

describe('ledger properties', () => {
  it('keeps charged − overrun + reserved + expired ≤ granted and the sums consistent for any sequence', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), fc.boolean(), (ops, expireAtEnd) => {
        let b = EMPTY_BALANCE;
        const entries: LedgerEntryValue[] = [];
        const open: number[] = []; // reservations of jobs not yet settled
        const apply = (entry: LedgerEntryValue) => {
          const r = applyEntry(b, entry);
          if (r.ok) {
            b = r.balance;
            entries.push(entry);
          }
          return r.ok;
        };
        for (const op of ops) {
          if (op.op === 'grant') apply({ kind: 'grant', amount: op.amount });
          else if (op.op === 'adjust' && op.amount !== 0) apply({ kind: 'adjust', amount: op.amount });
          else if (op.op === 'refund') apply({ kind: 'refund', amount: op.amount });
          else if (op.op === 'reserve') {
            if (apply({ kind: 'reserve', amount: op.amount })) open.push(op.amount);
          } else if ((op.op === 'settle' || op.op === 'cancel') && open.length > 0) {
            const [reserved] = open.splice(op.job % open.length, 1) as [number];
            const s = op.op === 'settle' ? settleAmounts(reserved, Math.min(op.actual, reserved)) : undefined;
            expect(apply({ kind: 'release', amount: reserved })).toBe(true);
            if (s && s.charge > 0) expect(apply({ kind: 'charge', amount: s.charge, overrun: s.overrun })).toBe(true);
          }
          // The invariant holds after every step.
          expect(b.charged - b.overrun + b.reserved + b.expired).toBeLessThanOrEqual(b.granted);
          expect(b.reserved).toBe(open.reduce((s, r) => s + r, 0));
          expect(Math.min(b.charged, b.reserved, b.expired, b.overrun)).toBeGreaterThanOrEqual(0);
        }
        if (expireAtEnd) {
          for (const r of open.splice(0)) apply({ kind: 'release', amount: r });
          const free = available(b);
          if (free > 0) expect(apply({ kind: 'expire', amount: free })).toBe(true);
          expect(available(b)).toBeLessThanOrEqual(0);
        }
        // The folded entries give the same balance as the step-by-step one: a balance is derivable from its rows.
        expect(balanceOf(entries)).toEqual(b);
        const sum = (kind: LedgerEntryValue['kind']) => entries.filter((e) => e.kind === kind).reduce((s, e) => s + e.amount, 0);
        expect(b.granted).toBe(sum('grant') + sum('adjust'));
        expect(b.reserved).toBe(sum('reserve') - sum('release'));
        expect(b.expired).toBe(sum('expire'));
      }),
      { numRuns: 300 },
    );
  });
});
