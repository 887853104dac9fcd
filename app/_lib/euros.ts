// Amounts typed in euros by staff (credit notes, payments), read as integer cents.

/** eurosToCents reads a plain amount in euros ("12", "12.5", "12,50") as cents; undefined if it is not one. */
export function eurosToCents(text: string): number | undefined {
  const match = /^(\d{1,9})(?:[.,](\d{1,2}))?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}
