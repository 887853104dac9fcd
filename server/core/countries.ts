// Countries a tenant can be registered in (ISO 3166-1 alpha-2) and which are in the EU.
// Display names come from Intl.DisplayNames in the reader's language.

export const EU_COUNTRIES = [
  'AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU',
  'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK',
] as const;

export const OTHER_COUNTRIES = [
  'AU', 'BR', 'CA', 'CH', 'CN', 'GB', 'IL', 'IN', 'IS', 'JP', 'KR', 'LI', 'NO', 'NZ', 'SG', 'TR', 'UA', 'US',
] as const;

export const COUNTRIES: readonly string[] = [...EU_COUNTRIES, ...OTHER_COUNTRIES].sort();

/** isKnownCountry tells whether a code is one of the countries the portal accepts. */
export function isKnownCountry(code: string): boolean {
  return COUNTRIES.includes(code);
}

/** isEuCountry tells whether a country is an EU member state. */
export function isEuCountry(code: string): boolean {
  return (EU_COUNTRIES as readonly string[]).includes(code);
}
