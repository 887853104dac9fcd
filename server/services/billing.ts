// A tenant's billing profile: who its invoices are made out to. Companies need one before their first
// paid job (issue #10); the VAT ID of an EU company is checked for its state's shape and check digit.
import { eq } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { billingProfiles } from '~/db/schema';
import { checkVatId } from '~/server/core/billing/vat-id';
import { isEuCountry } from '~/server/core/countries';
import { AppError } from '~/server/errors';
import type { TenantActor } from './actor';
import { recordAudit } from './audit';
import { inTransaction } from './transaction';

export interface BillingProfileInput {
  legalName: string;
  street: string;
  postcode: string;
  city: string;
  country: string;
  /** Empty or absent: the company has none. */
  vatId?: string | null;
  billingEmail: string;
  purchaseOrder?: string | null;
}

/** getBillingProfile returns the tenant's billing profile, or null before it is filled in. */
export async function getBillingProfile(db: DbOrTx, actor: TenantActor) {
  const [profile] = await db.select().from(billingProfiles).where(eq(billingProfiles.orgId, actor.org.id));
  return profile ?? null;
}

/** vatIdOf returns the VAT ID as stored (normalised for EU states), or refuses it on the field with the expected shape. */
function vatIdOf(country: string, raw: string | null | undefined): string | null {
  const given = raw?.trim();
  if (!given) return null;
  if (!isEuCountry(country)) return given.toUpperCase();
  const checked = checkVatId(country, given);
  if (checked.ok) return checked.vatId;
  if (checked.reason === 'checkDigit') throw new AppError('BAD_REQUEST', 'billing.vatIdCheckDigit', { example: checked.example }, 'vatId');
  throw new AppError('BAD_REQUEST', 'billing.vatIdShape', { prefix: 'prefix' in checked ? checked.prefix : '', example: 'example' in checked ? checked.example : '' }, 'vatId');
}

/** setBillingProfile stores the tenant's billing profile (owners and managers), audited with what changed. */
export async function setBillingProfile(db: Db, actor: TenantActor, input: BillingProfileInput, now: Date) {
  const vatId = vatIdOf(input.country, input.vatId);
  const values = {
    legalName: input.legalName,
    street: input.street,
    postcode: input.postcode,
    city: input.city,
    country: input.country,
    vatId,
    billingEmail: input.billingEmail,
    purchaseOrder: input.purchaseOrder?.trim() || null,
    updatedAt: now,
    updatedBy: actor.userId,
  };
  return inTransaction(db, async (tx) => {
    const [before] = await tx.select().from(billingProfiles).where(eq(billingProfiles.orgId, actor.org.id)).for('update');
    const [saved] = await tx
      .insert(billingProfiles)
      .values({ orgId: actor.org.id, ...values })
      .onConflictDoUpdate({ target: billingProfiles.orgId, set: values })
      .returning();
    const changed = before ? (Object.keys(values) as (keyof typeof values)[]).filter((k) => k !== 'updatedAt' && k !== 'updatedBy' && before[k] !== values[k]) : Object.keys(values).filter((k) => k !== 'updatedAt' && k !== 'updatedBy');
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: before ? 'billing.profile_changed' : 'billing.profile_created', targetType: 'organisation', targetId: actor.org.id, data: { changed, vatId } });
    return saved!;
  });
}
