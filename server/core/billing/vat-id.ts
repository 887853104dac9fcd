// VAT identification numbers of EU member states: the shape each state gives them (as the EU's VIES
// service documents them) and, where the state publishes it, the check digit. Pure: whether a number
// is registered is a question for VIES, which the portal does not ask (no network from here); a number
// that cannot be one is refused on the field, with the shape the person should enter.
import { isEuCountry } from '../countries';

interface VatRule {
  /** The prefix of the number: the ISO code, except Greece (EL). */
  prefix: string;
  /** The part after the prefix. */
  body: RegExp;
  /** An example of the shape, shown in the refusal; it passes the check digit too (people copy it). */
  example: string;
  /** The state's check digit, where published (body without prefix). */
  check?: (body: string) => boolean;
}

const digits = (s: string) => [...s].map(Number);

/** ISO 7064 MOD 11,10, the check of German numbers. */
function mod11_10(body: string): boolean {
  const d = digits(body);
  let product = 10;
  for (const digit of d.slice(0, -1)) {
    let sum = (digit + product) % 10;
    if (sum === 0) sum = 10;
    product = (2 * sum) % 11;
  }
  const check = (11 - product) % 10;
  return check === d[d.length - 1];
}

/** Weighted sum mod 11, the check of Austrian numbers (after the U). */
function austria(body: string): boolean {
  const d = digits(body.slice(1));
  let sum = 0;
  for (let i = 0; i < 7; i++) {
    const v = d[i]! * (i % 2 === 0 ? 1 : 2);
    sum += v > 9 ? Math.floor(v / 10) + (v % 10) : v;
  }
  return (10 - ((sum + 4) % 10)) % 10 === d[7];
}

/** Belgian numbers: the last two digits are 97 − (the first eight mod 97). */
function belgium(body: string): boolean {
  return 97 - (Number(body.slice(0, 8)) % 97) === Number(body.slice(8));
}

/** Dutch numbers: the eleven test on the nine digits before B. */
function netherlands(body: string): boolean {
  const d = digits(body.slice(0, 9));
  const sum = d.slice(0, 8).reduce((acc, v, i) => acc + v * (9 - i), 0);
  return sum % 11 === d[8] && sum % 11 !== 10;
}

/** Weighted sum mod 11, with the weights of Polish numbers. */
function poland(body: string): boolean {
  const w = [6, 5, 7, 2, 3, 4, 5, 6, 7];
  const d = digits(body);
  return w.reduce((acc, v, i) => acc + v * d[i]!, 0) % 11 === d[9];
}

/** Italian numbers: the Luhn check over eleven digits. */
function luhn(body: string): boolean {
  let sum = 0;
  for (const [i, digit] of digits(body).entries()) {
    const v = i % 2 === 1 ? digit * 2 : digit;
    sum += v > 9 ? v - 9 : v;
  }
  return sum % 10 === 0;
}

const RULES: Record<string, VatRule> = {
  AT: { prefix: 'AT', body: /^U\d{8}$/, example: 'ATU12345675', check: austria },
  BE: { prefix: 'BE', body: /^[01]\d{9}$/, example: 'BE0123456749', check: belgium },
  BG: { prefix: 'BG', body: /^\d{9,10}$/, example: 'BG123456789' },
  CY: { prefix: 'CY', body: /^\d{8}[A-Z]$/, example: 'CY12345678X' },
  CZ: { prefix: 'CZ', body: /^\d{8,10}$/, example: 'CZ12345678' },
  DE: { prefix: 'DE', body: /^\d{9}$/, example: 'DE123456788', check: mod11_10 },
  DK: { prefix: 'DK', body: /^\d{8}$/, example: 'DK12345678' },
  EE: { prefix: 'EE', body: /^\d{9}$/, example: 'EE123456789' },
  ES: { prefix: 'ES', body: /^[A-Z0-9]\d{7}[A-Z0-9]$/, example: 'ESX1234567X' },
  FI: { prefix: 'FI', body: /^\d{8}$/, example: 'FI12345678' },
  FR: { prefix: 'FR', body: /^[0-9A-HJ-NP-Z]{2}\d{9}$/, example: 'FR12345678901' },
  GR: { prefix: 'EL', body: /^\d{9}$/, example: 'EL123456789' },
  HR: { prefix: 'HR', body: /^\d{11}$/, example: 'HR12345678901' },
  HU: { prefix: 'HU', body: /^\d{8}$/, example: 'HU12345678' },
  IE: { prefix: 'IE', body: /^(\d{7}[A-W][A-IW]?|\d[A-Z+*]\d{5}[A-W])$/, example: 'IE1234567WA' },
  IT: { prefix: 'IT', body: /^\d{11}$/, example: 'IT12345678903', check: luhn },
  LT: { prefix: 'LT', body: /^(\d{9}|\d{12})$/, example: 'LT123456789' },
  LU: { prefix: 'LU', body: /^\d{8}$/, example: 'LU12345678' },
  LV: { prefix: 'LV', body: /^\d{11}$/, example: 'LV12345678901' },
  MT: { prefix: 'MT', body: /^\d{8}$/, example: 'MT12345678' },
  NL: { prefix: 'NL', body: /^\d{9}B\d{2}$/, example: 'NL123456782B01', check: netherlands },
  PL: { prefix: 'PL', body: /^\d{10}$/, example: 'PL1234567883', check: poland },
  PT: { prefix: 'PT', body: /^\d{9}$/, example: 'PT123456789' },
  RO: { prefix: 'RO', body: /^[1-9]\d{1,9}$/, example: 'RO1234567890' },
  SE: { prefix: 'SE', body: /^\d{10}01$/, example: 'SE123456789001' },
  SI: { prefix: 'SI', body: /^\d{8}$/, example: 'SI12345678' },
  SK: { prefix: 'SK', body: /^\d{10}$/, example: 'SK1234567890' },
};

/** vatIdExamples lists each EU state's example VAT ID, as the refusals show them. */
export function vatIdExamples(): { country: string; example: string }[] {
  return Object.entries(RULES).map(([country, rule]) => ({ country, example: rule.example }));
}

export type VatIdCheck =
  | { ok: true; vatId: string }
  | { ok: false; reason: 'notEu'; country: string }
  | { ok: false; reason: 'prefix' | 'shape' | 'checkDigit'; example: string; prefix: string };

/** normaliseVatId drops spaces, dots and dashes and upper-cases: "de 123.456.789" → "DE123456789". */
export function normaliseVatId(raw: string): string {
  return raw.replace(/[\s.-]/g, '').toUpperCase();
}

/**
 * checkVatId tells whether a VAT ID can be one of the given EU country's (prefix, shape, check digit
 * where published) and returns it normalised; otherwise why not and what shape is expected.
 */
export function checkVatId(country: string, raw: string): VatIdCheck {
  const rule = RULES[country];
  if (!rule || !isEuCountry(country)) return { ok: false, reason: 'notEu', country };
  const vatId = normaliseVatId(raw);
  if (!vatId.startsWith(rule.prefix)) return { ok: false, reason: 'prefix', example: rule.example, prefix: rule.prefix };
  const body = vatId.slice(rule.prefix.length);
  if (!rule.body.test(body)) return { ok: false, reason: 'shape', example: rule.example, prefix: rule.prefix };
  if (rule.check && !rule.check(body)) return { ok: false, reason: 'checkDigit', example: rule.example, prefix: rule.prefix };
  return { ok: true, vatId };
}
