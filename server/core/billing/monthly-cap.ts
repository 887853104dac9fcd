// When a company's monthly cap counts as reached, for the notice and mail that say so. A reservation
// beyond the cap is refused (and rolls back, so it cannot be the moment that tells anyone); the cap is
// reached, for people, once what is left of it could not take another reservation the size of the one
// just made: the next job like it will be refused.

/** monthlyCapReached tells whether, after a reservation of `amountCents` on `spentBeforeCents` of the month's spend, the cap is (as good as) used up. */
export function monthlyCapReached(input: { capCents: number; spentBeforeCents: number; amountCents: number }): boolean {
  const leftAfter = input.capCents - input.spentBeforeCents - input.amountCents;
  return leftAfter < input.amountCents;
}

/** capMonth is the month a day counts towards, as its first day (yyyy-mm-01). */
export function capMonth(today: string): string {
  return `${today.slice(0, 7)}-01`;
}

/**
 * suggestedMonthlyCapCents is the cap staff are offered with a raised credit line: the tenant's cap
 * scaled as the line grows (a €1,000 starter line capped at €1,000 a month raised to €25,000 suggests
 * €25,000), in whole euros, never above the new line (a cap above it could never bind) nor below the
 * cap as it is. No cap stays no cap.
 */
export function suggestedMonthlyCapCents(input: { capCents: number | null; lineCents: number; newLineCents: number }): number | null {
  if (input.capCents === null) return null;
  if (input.lineCents <= 0) return input.capCents;
  const scaled = Math.round((input.capCents * input.newLineCents) / input.lineCents / 100) * 100;
  return Math.min(Math.max(scaled, input.capCents), Math.max(input.newLineCents, input.capCents));
}

/**
 * suggestedCapForLinesChange is the cap staff are offered when a tenant's credit lines, `linesCents` in
 * total now, change by `changeCents` (a new line, or an adjustment): grown with the lines for a raise
 * (suggestedMonthlyCapCents), the cap as it is for a cut or no change.
 */
export function suggestedCapForLinesChange(input: { capCents: number | null; linesCents: number; changeCents: number }): number | null {
  if (input.changeCents <= 0) return input.capCents;
  return suggestedMonthlyCapCents({ capCents: input.capCents, lineCents: input.linesCents, newLineCents: input.linesCents + input.changeCents });
}

/** The highest monthly cap staff may set, in cents (€100 million, the most a credit line takes). */
export const MAX_MONTHLY_CAP_CENTS = 100_000_000_00;

/** isValidMonthlyCapCents tells whether a cap staff set is one: whole euros from €0 to MAX_MONTHLY_CAP_CENTS, or null for no cap. */
export function isValidMonthlyCapCents(capCents: number | null): boolean {
  if (capCents === null) return true;
  return Number.isSafeInteger(capCents) && capCents >= 0 && capCents <= MAX_MONTHLY_CAP_CENTS && capCents % 100 === 0;
}

/** capChange is how an audit row records a monthly cap that changed: from and to, in cents (null: no cap). */
export function capChange(from: number | null, to: number | null): { capCents: { from: number | null; to: number | null } } {
  return { capCents: { from, to } };
}

/** lineChange is how an audit row records a credit line that changed: granted from and to, in cents. */
export function lineChange(from: number, to: number): { grantedCents: { from: number; to: number } } {
  return { grantedCents: { from, to } };
}

/** monthsBefore lists the `count` calendar months before the one of `today`, newest first (yyyy-mm). */
export function monthsBefore(today: string, count: number): string[] {
  const year = Number(today.slice(0, 4));
  const month = Number(today.slice(5, 7)) - 1;
  return Array.from({ length: count }, (_, i) => {
    const index = year * 12 + month - (i + 1);
    return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
  });
}
