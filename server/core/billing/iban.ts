// IBANs (ISO 13616): two letters, two check digits, then the country's account number. Pure: the check
// digits are the one test an IBAN carries in itself (mod 97 = 1); whether the account exists is the bank's.

/** normaliseIban drops spaces and upper-cases: "de89 3704 0044 0532 0130 00" → "DE89370400440532013000". */
export function normaliseIban(raw: string): string {
  return raw.replace(/\s/g, '').toUpperCase();
}

/** isValidIban tells whether an IBAN has the shape and its check digits are right (ISO 7064 MOD 97-10). */
export function isValidIban(raw: string): boolean {
  const iban = normaliseIban(raw);
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** formatIban groups an IBAN in fours, as it is printed: "DE89 3704 0044 0532 0130 00". */
export function formatIban(raw: string): string {
  return normaliseIban(raw).replace(/(.{4})(?=.)/g, '$1 ');
}
