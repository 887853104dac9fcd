import { describe, expect, it } from 'vitest';
import { checkVatId } from '~/server/core/billing/vat-id';
import { de } from './de';
import { en } from './en';

// A VAT ID shown as an example anywhere in the catalogues must pass the portal's own check: people
// copy examples, and "like ATU12345678" was refused by the very form that showed it.
const SHOWN_VAT_ID = /\b(ATU\d{8}|BE[01]\d{9}|DE\d{9}|IT\d{11}|NL\d{9}B\d{2}|PL\d{10})\b/g;

describe('VAT IDs shown in the catalogues', () => {
  const shown = [...Object.entries(en), ...Object.entries(de)].flatMap(([key, text]) => [...text.matchAll(SHOWN_VAT_ID)].map((m) => ({ key, vatId: m[1]! })));

  it('include the billing form’s hint', () => {
    expect(shown.map((s) => s.key)).toContain('billing.vatIdHint');
  });

  it.each(shown)('$key: $vatId passes the check digit', ({ vatId }) => {
    expect(checkVatId(vatId.slice(0, 2), vatId).ok).toBe(true);
  });
});
