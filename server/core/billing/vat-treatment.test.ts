import { describe, expect, it } from 'vitest';
import { dueDate, vatTreatmentFor } from './vat-treatment';

describe('VAT treatment of an invoice', () => {
  it.each([
    // issuer, customer, customer's VAT ID, expected
    ['DE', 'DE', 'DE136695976', 'standard', 190, 'domestic business'],
    ['DE', 'DE', null, 'standard', 190, 'domestic, no VAT ID'],
    ['DE', 'AT', 'ATU13585627', 'reverseCharge', 0, 'EU business in another state'],
    ['DE', 'NL', 'NL004495445B01', 'reverseCharge', 0, 'EU business in another state'],
    ['DE', 'AT', null, 'standard', 190, 'EU customer without a VAT ID'],
    ['DE', 'CH', null, 'standard', 190, 'outside the EU, no VAT ID'],
    ['CH', 'DE', 'DE136695976', 'standard', 190, 'issuer outside the EU'],
  ] as const)('%s → %s %s: %s %i (%s)', (issuerCountry, customerCountry, customerVatId, treatment, vatPermille, _case) => {
    expect(vatTreatmentFor({ issuerCountry, customerCountry, customerVatId, standardVatPermille: 190 })).toEqual({ treatment, vatPermille });
  });

  it('uses the configured standard rate', () => {
    expect(vatTreatmentFor({ issuerCountry: 'DE', customerCountry: 'DE', customerVatId: null, standardVatPermille: 70 })).toEqual({ treatment: 'standard', vatPermille: 70 });
  });
});

describe('due date', () => {
  it.each([
    ['2026-03-31T23:59:00Z', 14, '2026-04-14'],
    ['2026-12-20T08:00:00Z', 30, '2027-01-19'],
    ['2026-02-01T00:00:00Z', 0, '2026-02-01'],
  ])('issued %s, %i days → %s', (issued, days, due) => {
    expect(dueDate(new Date(issued), days)).toBe(due);
  });

  it('refuses negative terms', () => {
    expect(() => dueDate(new Date('2026-01-01T00:00:00Z'), -1)).toThrow(RangeError);
  });
});
