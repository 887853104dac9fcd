// Ledger maths: a balance is derived from append-only entries. Pure; amounts are integers in the
// allocation's unit (GPU-seconds for research budgets, euro cents for company credit lines).

export const LEDGER_KINDS = ['grant', 'reserve', 'release', 'charge', 'adjust', 'refund', 'expire'] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export interface Balance {
  granted: number;
  charged: number;
  reserved: number;
  expired: number;
  /** What was charged beyond jobs' reservations (see settleAmounts); refunds do not change it. */
  overrun: number;
}

export const EMPTY_BALANCE: Balance = { granted: 0, charged: 0, reserved: 0, expired: 0, overrun: 0 };

export interface LedgerEntryValue {
  kind: LedgerKind;
  /** Positive for every kind except adjust, which may be negative. */
  amount: number;
  /** For charge: how much of it exceeded the job's reservation. */
  overrun?: number;
}

/** available returns what can still be reserved: granted − charged − reserved − expired. */
export function available(balance: Balance): number {
  return balance.granted - balance.charged - balance.reserved - balance.expired;
}

export type LedgerRefusal =
  | { reason: 'notInteger' }
  | { reason: 'notPositive' }
  | { reason: 'insufficient'; needed: number; available: number }
  | { reason: 'releaseExceedsReserved'; reserved: number }
  | { reason: 'refundExceedsCharged'; charged: number }
  | { reason: 'adjustBelowUsed'; used: number };

/** applyEntry returns the balance after an entry, or the reason the entry is not allowed. */
export function applyEntry(balance: Balance, entry: LedgerEntryValue): { ok: true; balance: Balance } | { ok: false; refusal: LedgerRefusal } {
  const { amount } = entry;
  if (!Number.isSafeInteger(amount) || (entry.overrun !== undefined && !Number.isSafeInteger(entry.overrun))) {
    return { ok: false, refusal: { reason: 'notInteger' } };
  }
  if (entry.kind !== 'adjust' && amount <= 0 && !(entry.kind === 'charge' && amount === 0)) {
    return { ok: false, refusal: { reason: 'notPositive' } };
  }
  const b = { ...balance };
  switch (entry.kind) {
    case 'grant':
      b.granted += amount;
      break;
    case 'adjust': {
      if (amount === 0) return { ok: false, refusal: { reason: 'notPositive' } };
      const used = b.charged - b.overrun + b.reserved + b.expired;
      if (b.granted + amount < used) return { ok: false, refusal: { reason: 'adjustBelowUsed', used } };
      b.granted += amount;
      break;
    }
    case 'reserve': {
      const free = available(b);
      if (amount > free) return { ok: false, refusal: { reason: 'insufficient', needed: amount, available: Math.max(0, free) } };
      b.reserved += amount;
      break;
    }
    case 'release':
      if (amount > b.reserved) return { ok: false, refusal: { reason: 'releaseExceedsReserved', reserved: b.reserved } };
      b.reserved -= amount;
      break;
    case 'charge':
      b.charged += amount;
      b.overrun += entry.overrun ?? 0;
      break;
    case 'refund':
      if (amount > b.charged) return { ok: false, refusal: { reason: 'refundExceedsCharged', charged: b.charged } };
      b.charged -= amount; // overrun stays: it records what was once charged beyond a reservation
      break;
    case 'expire': {
      const free = available(b);
      if (amount > Math.max(0, free)) return { ok: false, refusal: { reason: 'insufficient', needed: amount, available: Math.max(0, free) } };
      b.expired += amount;
      break;
    }
  }
  return { ok: true, balance: b };
}

/** balanceOf folds a sequence of entries into a balance, throwing on an entry that is not allowed. */
export function balanceOf(entries: readonly LedgerEntryValue[]): Balance {
  let b = EMPTY_BALANCE;
  for (const entry of entries) {
    const result = applyEntry(b, entry);
    if (!result.ok) throw new Error(`ledger entry ${entry.kind} ${entry.amount} refused: ${result.refusal.reason}`);
    b = result.balance;
  }
  return b;
}

export interface Settlement {
  /** The job's whole reservation, released at settlement. */
  release: number;
  /** Amount charged: always the actual usage, which was consumed whether or not it was reserved. */
  charge: number;
  /** The reserved amount the job did not use (release − charge, at least 0). */
  unused: number;
  /** Usage beyond the reservation (e.g. a scheduler's grace time): charged and flagged. */
  overrun: number;
}

/**
 * settleAmounts splits a finished job's actual usage against its reservation.
 * Rule: release the whole reservation and charge the actual usage in full — the net effect is
 * "charge actual, release the rest". Usage beyond the reservation is an overrun: charged, flagged,
 * and it may drive `available` below zero, which blocks new reservations until staff adjust.
 */
export function settleAmounts(reserved: number, actual: number): Settlement {
  const used = Math.max(0, actual);
  return { release: reserved, charge: used, unused: Math.max(0, reserved - used), overrun: Math.max(0, used - reserved) };
}

/** usedPermille returns charged / granted in per-mille (1000 = all used), the basis of the 80 % and 100 % notices. */
export function usedPermille(balance: Balance): number {
  if (balance.granted <= 0) return balance.charged > 0 ? 1000 : 0;
  return Math.floor((balance.charged * 1000) / balance.granted);
}
