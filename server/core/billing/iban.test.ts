import { describe, expect, it } from 'vitest';
import { formatIban, isValidIban, normaliseIban } from './iban';

describe('IBAN check digits', () => {
  it.each([
    ['DE89370400440532013000', true],
    ['de89 3704 0044 0532 0130 00', true],
    ['AT611904300234573201', true],
    ['NL91ABNA0417164300', true],
    ['GB82WEST12345698765432', true],
    ['DE89370400440532013001', false], // one digit off
    ['DE98370400440532013000', false], // check digits swapped
    ['DE8937040044', false], // too short
    ['89DE370400440532013000', false], // no country
    ['', false],
  ])('%s → %s', (iban, valid) => {
    expect(isValidIban(iban)).toBe(valid);
  });

  it('prints in groups of four and reads back', () => {
    expect(formatIban('DE89370400440532013000')).toBe('DE89 3704 0044 0532 0130 00');
    expect(normaliseIban('DE89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
  });
});
