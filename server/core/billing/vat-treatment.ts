// Which VAT an invoice carries (EU VAT Directive 2006/112/EC). Pure: countries and VAT IDs in, the
// treatment out. A business customer with a VAT ID in another EU state than the issuer's accounts for
// the VAT itself (Art. 196, reverse charge): the invoice shows 0 % and says so. Every other customer,
// domestic or without a VAT ID, pays the issuer's standard rate.
import { isEuCountry } from '../countries';

export const VAT_TREATMENTS = ['standard', 'reverseCharge'] as const;
export type VatTreatment = (typeof VAT_TREATMENTS)[number];

export interface VatParties {
  issuerCountry: string;
  customerCountry: string;
  /** The customer's VAT ID as on its billing profile (already checked there), or null. */
  customerVatId: string | null;
  /** The issuer's standard rate, per-mille (190 = 19 %). */
  standardVatPermille: number;
}

/** vatTreatmentFor decides an invoice's VAT treatment and rate from who issues it and to whom. */
export function vatTreatmentFor(parties: VatParties): { treatment: VatTreatment; vatPermille: number } {
  const crossBorderEuBusiness =
    Boolean(parties.customerVatId) && isEuCountry(parties.issuerCountry) && isEuCountry(parties.customerCountry) && parties.customerCountry !== parties.issuerCountry;
  if (crossBorderEuBusiness) return { treatment: 'reverseCharge', vatPermille: 0 };
  return { treatment: 'standard', vatPermille: parties.standardVatPermille };
}

/** dueDate is the day an invoice is due: its issue day plus the payment terms (YYYY-MM-DD, UTC). */
export function dueDate(issuedAt: Date, paymentTermsDays: number): string {
  if (!Number.isInteger(paymentTermsDays) || paymentTermsDays < 0) throw new RangeError(`paymentTermsDays must be a non-negative integer, got ${paymentTermsDays}`);
  const day = Date.UTC(issuedAt.getUTCFullYear(), issuedAt.getUTCMonth(), issuedAt.getUTCDate());
  return new Date(day + paymentTermsDays * 86_400_000).toISOString().slice(0, 10);
}
