import { describe, expect, it } from 'vitest';
import { catalogueSchema, DEFAULT_CATALOGUE, DEMO_ISSUER, issuerSchema } from './catalogue';

describe('the catalogue’s invoice issuer', () => {
  it('the demo centre’s issuer passes its own checks, and a catalogue without one gets it', () => {
    expect(issuerSchema.parse(DEMO_ISSUER)).toEqual(DEMO_ISSUER);
    const { issuer: _omitted, ...withoutIssuer } = DEFAULT_CATALOGUE;
    expect(catalogueSchema.parse(withoutIssuer).issuer).toEqual(DEMO_ISSUER);
  });

  it('normalises the IBAN and VAT ID as printed by people', () => {
    const parsed = issuerSchema.parse({ ...DEMO_ISSUER, iban: 'de89 3704 0044 0532 0130 00', vatId: 'de 812 345 673' });
    expect(parsed.iban).toBe('DE89370400440532013000');
    expect(parsed.vatId).toBe('DE812345673');
  });

  it.each([
    ['an IBAN with wrong check digits', { iban: 'DE89370400440532013001' }, 'iban'],
    ['a VAT ID with a wrong check digit', { vatId: 'DE812345674' }, 'vatId'],
    ['a BIC of the wrong length', { bic: 'COBADEF' }, 'bic'],
    ['negative payment terms', { paymentTermsDays: -1 }, 'paymentTermsDays'],
  ])('refuses %s', (_what, change, field) => {
    const result = issuerSchema.safeParse({ ...DEMO_ISSUER, ...change });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([field]);
  });
});
