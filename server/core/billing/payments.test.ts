import { describe, expect, it } from 'vitest';
import { daysOverdue, invoiceStatus, openCents, overdueBeyond, paymentRefusal, reminderLevelDue } from './payments';

const invoice = { grossCents: 11_900, paidCents: 0, creditedGrossCents: 0, dueDate: '2026-11-15' };

describe('openCents', () => {
  it.each([
    [{ grossCents: 11_900, paidCents: 0, creditedGrossCents: 0 }, 11_900],
    [{ grossCents: 11_900, paidCents: 5_000, creditedGrossCents: 0 }, 6_900],
    [{ grossCents: 11_900, paidCents: 5_000, creditedGrossCents: 6_900 }, 0],
    [{ grossCents: 11_900, paidCents: 11_900, creditedGrossCents: 1_190 }, 0],
  ])('%o leaves %i open', (s, open) => expect(openCents(s)).toBe(open));
});

describe('daysOverdue', () => {
  it.each([
    ['2026-11-15', '2026-11-14', 0],
    ['2026-11-15', '2026-11-15', 0],
    ['2026-11-15', '2026-11-16', 1],
    ['2026-11-15', '2026-12-06', 21],
    [null, '2026-12-06', 0],
  ])('due %s, today %s: %i days', (due, today, days) => expect(daysOverdue(due, today)).toBe(days));
});

describe('invoiceStatus', () => {
  it.each([
    ['issued before its due date', invoice, '2026-11-15', 'issued'],
    ['partly paid', { ...invoice, paidCents: 1 }, '2026-11-10', 'partlyPaid'],
    ['partly settled by a credit note', { ...invoice, creditedGrossCents: 1_190 }, '2026-11-10', 'partlyPaid'],
    ['paid in full', { ...invoice, paidCents: 11_900 }, '2026-12-31', 'paid'],
    ['settled by payment and credit note', { ...invoice, paidCents: 5_000, creditedGrossCents: 6_900 }, '2026-12-31', 'paid'],
    ['open after the due date', invoice, '2026-11-16', 'overdue'],
    ['partly paid after the due date', { ...invoice, paidCents: 100 }, '2026-11-16', 'overdue'],
    ['without a due date', { ...invoice, dueDate: null }, '2030-01-01', 'issued'],
  ] as const)('%s', (_, s, today, status) => expect(invoiceStatus(s, today)).toBe(status));
});

describe('paymentRefusal', () => {
  it.each([
    [11_900, 5_000, null],
    [11_900, 11_900, null],
    [11_900, 11_901, { reason: 'exceedsOpen', openCents: 11_900 }],
    [0, 1, { reason: 'exceedsOpen', openCents: 0 }],
    [11_900, 0, { reason: 'notPositive' }],
    [11_900, -5, { reason: 'notPositive' }],
    [11_900, 1.5, { reason: 'notPositive' }],
  ])('open %i, paying %i', (open, amount, refusal) => expect(paymentRefusal(open, amount)).toEqual(refusal));
});

describe('reminderLevelDue', () => {
  const days = [7, 21];
  it.each([
    [6, [], null],
    [7, [], 1],
    [8, [], 1], // the first reminder's day was missed: sent the day after
    [8, [1], null],
    [20, [1], null],
    [21, [1], 2],
    [30, [], 2], // both missed: only the second
    [30, [1, 2], null],
    [30, [2], null],
  ])('%i days overdue, sent %o: %o', (overdue, sent, level) => expect(reminderLevelDue(overdue, days, sent)).toBe(level));
  it('sends none without reminder days', () => expect(reminderLevelDue(100, [], [])).toBeNull());
});

describe('overdueBeyond', () => {
  const list = [
    { ...invoice, number: 'INV-2026-000001', dueDate: '2026-10-15' },
    { ...invoice, number: 'INV-2026-000002', dueDate: '2026-11-15' },
    { ...invoice, number: 'INV-2026-000003', dueDate: '2026-10-01', paidCents: 11_900 },
  ];
  it('lists the open invoices overdue more than the policy allows', () => expect(overdueBeyond(list, 30, '2026-11-20')).toEqual(['INV-2026-000001']));
  it('blocks on none on the day itself', () => expect(overdueBeyond(list, 36, '2026-11-20')).toEqual([]));
  it('is off without a policy', () => expect(overdueBeyond(list, null, '2030-01-01')).toEqual([]));
});
