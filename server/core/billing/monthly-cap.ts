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
