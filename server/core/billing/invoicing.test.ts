import { describe, expect, it } from 'vitest';
import {
  counterSeries,
  coveredDays,
  creditNoteAmounts,
  DEFAULT_VAT_PERMILLE,
  documentNumber,
  invoiceLines,
  invoiceTotals,
  isMonth,
  lineVatCents,
  listPriceCents,
  monthHasEnded,
  monthlyRunDue,
  monthPeriod,
  parseDocumentNumber,
  previousMonth,
  storageLines,
  vatCents,
  type ChargedJob,
} from './invoicing';

const H = 3600;

describe('vatCents (per-mille rate on the net, rounded half up to the cent)', () => {
  it.each([
    // net, ‰, expected — hand-computed
    [0, 190, 0],
    [100, 190, 19], // 1.00 € × 19 % = 0.19 €
    [1, 190, 0], // 0.19 ct → 0
    [3, 190, 1], // 0.57 ct → 1
    [50, 190, 10], // 9.5 ct → 10 (half up)
    [150, 190, 29], // 28.5 ct → 29 (half up)
    [250, 190, 48], // 47.5 ct → 48 (half up)
    [249, 190, 47], // 47.31 ct → 47
    [116_000, 190, 22_040], // 1,160.00 € → 220.40 €
    [123_457, 190, 23_457], // 23,456.83 ct → 23,457
    [1_000, 70, 70], // 7 %: 10.00 € → 0.70 €
    [15, 70, 1], // 1.05 ct → 1
    [5, 100, 1], // 0.5 ct → 1 (half up)
    [999, 0, 0], // no VAT
  ])('net %i ct at %i ‰ → %i ct', (net, permille, expected) => {
    expect(vatCents(net, permille)).toBe(expected);
  });

  it('defaults to 19 %', () => {
    expect(DEFAULT_VAT_PERMILLE).toBe(190);
  });

  it.each([[-1, 190], [1.5, 190], [100, -1], [100, 1001], [100, 19.5]])('refuses net %s at %s ‰', (net, permille) => {
    expect(() => vatCents(net, permille)).toThrow(RangeError);
  });
});

describe('invoiceTotals (VAT once on the net total)', () => {
  it.each([
    // lines, ‰, net, vat, gross
    [[], 190, 0, 0, 0],
    [[116_000], 190, 116_000, 22_040, 138_040],
    // per line VAT would be 10 + 10 = 20; on the total 100 × 19 % = 19
    [[50, 50], 190, 100, 19, 119],
    [[87_000, 29_000, 14_700], 190, 130_700, 24_833, 155_533], // 24,833 exactly
    [[1_234, 5_678], 190, 6_912, 1_313, 8_225], // 1,313.28 → 1,313
  ])('lines %j at %i ‰ → net %i, VAT %i, gross %i', (lines, permille, net, vat, gross) => {
    expect(invoiceTotals(lines.map((netCents) => ({ netCents })), permille)).toEqual({ netCents: net, vatCents: vat, grossCents: gross });
  });
});

describe('lineVatCents (the invoice VAT shared among its lines, adding up exactly)', () => {
  it.each([
    [[1_000], 190, [190]],
    [[3_625, 0], 689, [689, 0]],
    [[1, 1, 1], 1, [1, 0, 0]], // ties go to the earlier line
    [[2_900, 725], 689, [551, 138]], // 551.2 and 137.8: floors 551 + 137, the remaining cent to the larger remainder
    [[333, 333, 334], 190, [63, 63, 64]],
    [[0, 0], 0, [0, 0]],
    [[500, 500], 0, [0, 0]], // reverse charge
  ])('%j sharing %i → %j', (nets, vat, expected) => {
    const shares = lineVatCents(nets, vat);
    expect(shares).toEqual(expected);
    expect(shares.reduce((a, b) => a + b, 0)).toBe(vat);
  });
});

describe('listPriceCents (GPU-hours × unit price, rounded half up)', () => {
  it.each([
    [4 * H, 290, 1_160], // 4 GPU-h × 2.90 €
    [H / 2, 290, 145],
    [1, 290, 0], // 0.0806 ct
    [1800, 1, 1], // 0.5 ct → 1
    [1799, 1, 0],
    [10 * H + 900, 490, 5_023], // 10.25 h × 4.90 € = 50.225 € → 50.23 €
  ])('%i GPU-s at %i ct/GPU-h → %i ct', (gpuSeconds, price, expected) => {
    expect(listPriceCents(gpuSeconds, price)).toBe(expected);
  });
});

describe('invoiceLines (per resource class and tariff; net = sum of the jobs’ costs)', () => {
  const job = (resourceClassId: string, centsPerGpuHour: number, gpuSeconds: number, costCents = listPriceCents(gpuSeconds, centsPerGpuHour)): ChargedJob => ({
    resourceClassId,
    centsPerGpuHour,
    gpuSeconds,
    costCents,
  });

  it('gives no lines without jobs', () => {
    expect(invoiceLines([])).toEqual([]);
  });

  it('puts interactive sessions of a class and tariff on a line of their own, after its batch jobs', () => {
    const lines = invoiceLines([{ ...job('h100', 290, 2 * H), interactive: true }, job('h100', 290, 4 * H), { ...job('h100', 290, 1 * H), interactive: true }]);
    expect(lines).toEqual([
      { lineNo: 1, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 1, gpuSeconds: 4 * H, netCents: 1_160 },
      { lineNo: 2, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 2, gpuSeconds: 3 * H, netCents: 870, interactive: true },
    ]);
  });

  it('sums the jobs of one class and tariff into one line', () => {
    const lines = invoiceLines([job('h100', 290, 4 * H), job('h100', 290, 2 * H), job('h100', 290, 30 * 60)]);
    // 6.5 GPU-h × 2.90 € = 18.85 €; jobs: 11.60 + 5.80 + 1.45
    expect(lines).toEqual([{ lineNo: 1, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 3, gpuSeconds: 6.5 * H, netCents: 1_885 }]);
    expect(lines[0]!.netCents).toBe(listPriceCents(lines[0]!.gpuSeconds, 290));
  });

  it('makes one line per class and per tariff, ordered by class then price', () => {
    const lines = invoiceLines([job('h100', 290, 10 * H), job('b200', 490, 2 * H), job('h100', 310, 1 * H), job('h100', 290, 5 * H), job('b200', 490, 3 * H)]);
    expect(lines).toEqual([
      { lineNo: 1, resourceClassId: 'b200', unitPriceCentsPerGpuHour: 490, jobs: 2, gpuSeconds: 5 * H, netCents: 2_450 },
      { lineNo: 2, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 2, gpuSeconds: 15 * H, netCents: 4_350 },
      { lineNo: 3, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 310, jobs: 1, gpuSeconds: 1 * H, netCents: 310 },
    ]);
    expect(invoiceTotals(lines, 190)).toEqual({ netCents: 7_110, vatCents: 1_351, grossCents: 8_461 }); // 1,350.9 → 1,351
  });

  it('splits a class and tariff by the projects’ cost centre and PO number, those without first (issue #24)', () => {
    const tagged = (costCentre: string | null, purchaseOrder: string | null, hours: number): ChargedJob => ({ ...job('h100', 290, hours * H), costCentre, purchaseOrder });
    const lines = invoiceLines([tagged('CC-20', 'PO-1', 1), tagged(null, null, 2), tagged('CC-10', null, 3), tagged('CC-20', 'PO-1', 4), tagged(null, null, 5)]);
    expect(lines).toEqual([
      { lineNo: 1, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 2, gpuSeconds: 7 * H, netCents: 2_030 },
      { lineNo: 2, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 1, gpuSeconds: 3 * H, netCents: 870, costCentre: 'CC-10' },
      { lineNo: 3, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 2, gpuSeconds: 5 * H, netCents: 1_450, costCentre: 'CC-20', purchaseOrder: 'PO-1' },
    ]);
    expect(lines.reduce((sum, l) => sum + l.netCents, 0)).toBe(listPriceCents(15 * H, 290));
  });

  it('takes the jobs’ frozen costs, rounded per job, rather than repricing the sum', () => {
    // Three jobs of 1,800 GPU-s at 1 ct/GPU-h: each costs 0.5 ct → 1 ct; the sum 1.5 GPU-h × 1 ct would be 2 ct.
    const lines = invoiceLines([job('h100', 1, 1800), job('h100', 1, 1800), job('h100', 1, 1800)]);
    expect(lines[0]).toMatchObject({ gpuSeconds: 5400, netCents: 3 });
    // A job's cost is whatever was frozen on it, even if the price list has changed since.
    expect(invoiceLines([job('h100', 290, H, 123)])[0]!.netCents).toBe(123);
  });

  it('adds up entries that already stand for several jobs', () => {
    const lines = invoiceLines([
      { resourceClassId: 'h100', centsPerGpuHour: 290, jobs: 3, gpuSeconds: 6 * H, costCents: 1_740 },
      { resourceClassId: 'h100', centsPerGpuHour: 290, gpuSeconds: H, costCents: 290 },
    ]);
    expect(lines).toEqual([{ lineNo: 1, resourceClassId: 'h100', unitPriceCentsPerGpuHour: 290, jobs: 4, gpuSeconds: 7 * H, netCents: 2_030 }]);
  });

  it('refuses negative or fractional amounts', () => {
    expect(() => invoiceLines([{ resourceClassId: 'h100', centsPerGpuHour: 290, jobs: 0, gpuSeconds: H, costCents: 290 }])).toThrow(RangeError);
    expect(() => invoiceLines([job('h100', 290, H, -1)])).toThrow(RangeError);
    expect(() => invoiceLines([job('h100', 290, 1.5, 1)])).toThrow(RangeError);
  });
});

describe('creditNoteAmounts', () => {
  const invoice = { netCents: 10_000, vatCents: 1_900, vatPermille: 190 };
  it.each([
    // already credited (net, vat), credit, expected
    [[0, 0], 2_500, { netCents: 2_500, vatCents: 475, grossCents: 2_975 }],
    [[0, 0], 10_000, { netCents: 10_000, vatCents: 1_900, grossCents: 11_900 }],
    [[0, 0], 50, { netCents: 50, vatCents: 10, grossCents: 60 }], // 9.5 → 10
    [[2_500, 475], 7_500, { netCents: 7_500, vatCents: 1_425, grossCents: 8_925 }],
    // rounding drift: the last credit note takes exactly the VAT left
    [[9_950, 1_891], 50, { netCents: 50, vatCents: 9, grossCents: 59 }],
  ] as const)('after %j, credit %i → %o', ([net, vat], credit, expected) => {
    expect(creditNoteAmounts(invoice, { netCents: net, vatCents: vat }, credit)).toEqual({ ok: true, amounts: expected });
  });

  it('never credits more VAT than was invoiced', () => {
    // 100 ct at 19 % → VAT 19; two credits of 50 would be 10 + 10 = 20 if rounded separately.
    const small = { netCents: 100, vatCents: 19, vatPermille: 190 };
    const first = creditNoteAmounts(small, { netCents: 0, vatCents: 0 }, 50);
    expect(first).toEqual({ ok: true, amounts: { netCents: 50, vatCents: 10, grossCents: 60 } });
    const second = creditNoteAmounts(small, { netCents: 50, vatCents: 10 }, 50);
    expect(second).toEqual({ ok: true, amounts: { netCents: 50, vatCents: 9, grossCents: 59 } });
  });

  it.each([
    [[0, 0], 10_001, { reason: 'exceedsRemaining', remainingCents: 10_000 }],
    [[6_000, 1_140], 4_001, { reason: 'exceedsRemaining', remainingCents: 4_000 }],
    [[10_000, 1_900], 1, { reason: 'exceedsRemaining', remainingCents: 0 }],
    [[0, 0], 0, { reason: 'notPositive' }],
    [[0, 0], -5, { reason: 'notPositive' }],
    [[0, 0], 1.5, { reason: 'notPositive' }],
  ] as const)('after %j refuses a credit of %s: %o', ([net, vat], credit, refusal) => {
    expect(creditNoteAmounts(invoice, { netCents: net, vatCents: vat }, credit)).toEqual({ ok: false, refusal });
  });
});

describe('document numbers', () => {
  it.each([
    ['invoice', 2026, 1, 'INV-2026-000001'],
    ['invoice', 2026, 42, 'INV-2026-000042'],
    ['invoice', 2027, 999_999, 'INV-2027-999999'],
    ['invoice', 2027, 1_000_000, 'INV-2027-1000000'],
    ['creditNote', 2026, 1, 'CN-2026-000001'],
    ['creditNote', 2030, 12_345, 'CN-2030-012345'],
  ] as const)('%s %i #%i → %s', (kind, year, sequence, expected) => {
    expect(documentNumber(kind, year, sequence)).toBe(expected);
    expect(parseDocumentNumber(expected)).toEqual({ kind, year, sequence });
  });

  it('keeps one counter per kind and year', () => {
    expect(counterSeries('invoice', 2026)).toBe('invoice-2026');
    expect(counterSeries('creditNote', 2026)).toBe('credit-note-2026');
  });

  it.each([[0], [-1], [1.5]])('refuses sequence %s', (sequence) => {
    expect(() => documentNumber('invoice', 2026, sequence)).toThrow(RangeError);
  });

  it.each(['INV-2026-1', 'XX-2026-000001', 'INV-2026-000000', 'inv-2026-000001', ''])('does not read %j', (value) => {
    expect(parseDocumentNumber(value)).toBeNull();
  });
});

describe('months', () => {
  it.each([
    ['2026-01', true],
    ['2026-12', true],
    ['2026-13', false],
    ['2026-00', false],
    ['2026-1', false],
    ['26-01', false],
    ['2026-01-01', false],
  ])('isMonth(%j) = %s', (value, expected) => {
    expect(isMonth(value)).toBe(expected);
  });

  it.each([
    ['2026-02', '2026-02-01', '2026-02-28', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['2028-02', '2028-02-01', '2028-02-29', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    ['2026-12', '2026-12-01', '2026-12-31', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
  ])('monthPeriod(%s) runs %s..%s, [%s, %s)', (month, firstDay, lastDay, start, end) => {
    const period = monthPeriod(month);
    expect({ firstDay: period.firstDay, lastDay: period.lastDay, start: period.start.toISOString(), end: period.end.toISOString() }).toEqual({ firstDay, lastDay, start, end });
  });

  it.each([
    ['2026-03-15T12:00:00Z', '2026-02'],
    ['2026-01-01T00:00:00Z', '2025-12'],
    ['2026-12-31T23:59:59Z', '2026-11'],
  ])('previousMonth(%s) = %s', (at, expected) => {
    expect(previousMonth(new Date(at))).toBe(expected);
  });

  it.each([
    ['2026-02', '2026-02-28T23:59:59.999Z', false],
    ['2026-02', '2026-03-01T00:00:00Z', true],
    ['2026-03', '2026-02-15T00:00:00Z', false],
  ])('monthHasEnded(%s, %s) = %s', (month, at, expected) => {
    expect(monthHasEnded(month, new Date(at))).toBe(expected);
  });

  it.each([
    ['2026-03-01T00:00:00Z', false],
    ['2026-03-01T00:09:59Z', false],
    ['2026-03-01T00:10:00Z', true],
    ['2026-03-17T08:00:00Z', true],
  ])('monthlyRunDue(%s) = %s', (at, expected) => {
    expect(monthlyRunDue(new Date(at))).toBe(expected);
  });
});

describe('storage lines (issue #27: TB-months per site, priced once from the byte-days)', () => {
  const TB = 10n ** 12n;
  it('makes a line per site with a price and usage, after nothing else, ordered by site', () => {
    const lines = storageLines([
      { siteId: 'fi-kajaani', byteDays: 30n * TB, daysInMonth: 30, centsPerTbMonth: 1500 },
      { siteId: 'de-jena', byteDays: 37_035_000_000_000n, daysInMonth: 30, centsPerTbMonth: 2000 },
      { siteId: 'ch-lugano', byteDays: 0n, daysInMonth: 30, centsPerTbMonth: 2500 },
      { siteId: 'xx-free', byteDays: TB, daysInMonth: 30, centsPerTbMonth: 0 },
    ]);
    expect(lines).toEqual([
      // 1.2345 TB-months: shown as 1.235, priced 24.69 exactly.
      { siteId: 'de-jena', storageByteDays: 37_035_000_000_000n, milliTbMonths: 1235, unitPriceCentsPerTbMonth: 2000, netCents: 2469 },
      { siteId: 'fi-kajaani', storageByteDays: 30n * TB, milliTbMonths: 1000, unitPriceCentsPerTbMonth: 1500, netCents: 1500 },
    ]);
  });
  it('prices the exact byte-days, not the rounded quantity', () => {
    // 0.0004 TB-months × €20 = 0.8 cent → 1 cent, although 0.000 TB-months is shown.
    const [line] = storageLines([{ siteId: 'de-jena', byteDays: 12_000_000_000n, daysInMonth: 30, centsPerTbMonth: 2000 }]);
    expect(line).toMatchObject({ milliTbMonths: 0, netCents: 1 });
  });
  it.each([
    ['a month', '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z', { firstDay: '2026-03-01', lastDay: '2026-03-31' }],
    ['a closing invoice at noon: its day included', '2026-03-01T00:00:00Z', '2026-03-15T12:00:00Z', { firstDay: '2026-03-01', lastDay: '2026-03-15' }],
    ['the rest of the month after it: from the next day', '2026-03-15T12:00:00Z', '2026-04-01T00:00:00Z', { firstDay: '2026-03-16', lastDay: '2026-03-31' }],
    ['a closing invoice at midnight', '2026-03-01T00:00:00Z', '2026-03-15T00:00:00Z', { firstDay: '2026-03-01', lastDay: '2026-03-14' }],
    ['less than a day starting nowhere', '2026-03-15T12:00:00Z', '2026-03-15T18:00:00Z', null],
  ])('covers the whole days starting in %s', (_label, from, until, expected) => {
    expect(coveredDays(new Date(from), new Date(until))).toEqual(expected);
  });
});
