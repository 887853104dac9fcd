import { describe, expect, it } from 'vitest';
import { checkVatId, normaliseVatId, vatIdExamples } from './vat-id';

describe('EU VAT IDs', () => {
  it.each(vatIdExamples())('shows an example for $country that passes its own check', ({ country, example }) => {
    expect(checkVatId(country, example)).toEqual({ ok: true, vatId: example });
  });

  // Numbers of real companies, published by them; each passes its state's check digit.
  it.each([
    ['DE', 'DE136695976'],
    ['AT', 'ATU13585627'],
    ['BE', 'BE0428759497'],
    ['NL', 'NL004495445B01'],
    ['IT', 'IT00743110157'],
    ['PL', 'PL5260250274'],
    ['GR', 'EL094259216'],
    ['FR', 'FR40303265045'],
    ['ES', 'ESA28015865'],
  ])('accepts %s %s', (country, vatId) => {
    expect(checkVatId(country, vatId)).toEqual({ ok: true, vatId });
  });

  it('normalises what people type: spaces, dots, dashes, lower case', () => {
    expect(normaliseVatId(' de 136.695-976 ')).toBe('DE136695976');
    expect(checkVatId('DE', 'de 136 695 976')).toEqual({ ok: true, vatId: 'DE136695976' });
  });

  it('refuses a wrong check digit, a wrong shape and another state’s prefix, naming the expected shape', () => {
    expect(checkVatId('DE', 'DE136695977')).toMatchObject({ ok: false, reason: 'checkDigit', example: 'DE123456788' });
    expect(checkVatId('DE', 'DE13669597')).toMatchObject({ ok: false, reason: 'shape', prefix: 'DE' });
    expect(checkVatId('DE', 'ATU13585627')).toMatchObject({ ok: false, reason: 'prefix', prefix: 'DE' });
    expect(checkVatId('GR', 'GR094259216')).toMatchObject({ ok: false, reason: 'prefix', prefix: 'EL' });
    expect(checkVatId('NL', 'NL004495446B01')).toMatchObject({ ok: false, reason: 'checkDigit' });
    expect(checkVatId('IT', 'IT00743110158')).toMatchObject({ ok: false, reason: 'checkDigit' });
  });

  it('knows no VAT ID outside the EU', () => {
    expect(checkVatId('CH', 'CHE-123.456.789')).toEqual({ ok: false, reason: 'notEu', country: 'CH' });
  });
});
