// A tenant's billing profile: who its invoices are made out to. Companies need one before their first
// paid job (issue #10); the VAT ID of an EU company is checked for its state's shape and check digit.
import { and, eq } from 'drizzle-orm';
import type { Db, DbOrTx } from '~/db/client';
import { allocations, billingProfiles, organisations } from '~/db/schema';
import { configuredCatalogue } from '~/server/catalogue';
import { addDays } from '~/server/core/working-days';
import { checkVatId } from '~/server/core/billing/vat-id';
import { isEuCountry } from '~/server/core/countries';
import { AppError } from '~/server/errors';
import type { TenantActor } from '~/server/services/actor';
import { recordAudit } from '~/server/services/audit';
import { grantBudget } from '~/server/services/ledger/ledger';
import { insertProject } from '~/server/services/tenants/projects';
import { inTransaction } from '~/server/services/transaction';
import { creditLineLimits } from '~/server/core/applications';
import { capChange, lineChange } from '~/server/core/billing/monthly-cap';

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
    const fields = (Object.keys(values) as (keyof typeof values)[]).filter((k) => k !== 'updatedAt' && k !== 'updatedBy');
    const changed = before ? fields.filter((k) => before[k] !== values[k]) : fields;
    await recordAudit(tx, { actorUserId: actor.userId, orgId: actor.org.id, action: before ? 'billing.profile_changed' : 'billing.profile_created', targetType: 'organisation', targetId: actor.org.id, data: { changed, vatId } });
    return saved!;
  });
}

/** What pay-as-you-go starts with: the catalogue's starting credit line and how long it runs. */
export function payAsYouGoTerms(): { startingCreditCents: number; durationDays: number; storageGb: number } {
  const terms = configuredCatalogue().payAsYouGo;
  return { startingCreditCents: terms.startingCreditEuros * 100, durationDays: terms.durationDays, storageGb: terms.storageGb };
}

/** What accepting the price list did: the starter line it opened, or none when the company already had a credit line. */
export interface PayAsYouGoStart {
  projectId: string | null;
  allocationId: string | null;
  creditCents: number;
}

/**
 * startPayAsYouGo lets the owner of a verified company with a billing profile accept the price list:
 * the acceptance is recorded on the tenant and audited. A company that has never had a credit line
 * starts at once, without staff: a project of its own gets the catalogue's starting credit line, and
 * the monthly cap is set to that amount if the company has none. A company that already has a credit
 * line (from staff) keeps its lines and its cap as they are: no money moves as a side effect of an
 * acceptance. A larger credit line is a request staff decide. Once per tenant. Runs on the portal's own
 * connection (`db`, not a tenant's transaction): a grant is out of the tenant role's reach (drizzle/0064).
 */
export async function startPayAsYouGo(db: Db, actor: TenantActor, now: Date): Promise<PayAsYouGoStart> {
  if (actor.org.kind !== 'company') throw new AppError('BAD_REQUEST', 'payg.companyOnly');
  const terms = payAsYouGoTerms();
  const today = now.toISOString().slice(0, 10);
  return inTransaction(db, async (tx) => {
    // The organisation row first (the lock order): two owners starting at once start once.
    const [org] = await tx
      .select({ status: organisations.status, acceptedAt: organisations.priceListAcceptedAt, cap: organisations.monthlyCapCents })
      .from(organisations)
      .where(eq(organisations.id, actor.org.id))
      .for('no key update');
    if (!org) throw new AppError('NOT_FOUND', 'error.notFound');
    if (org.acceptedAt) throw new AppError('CONFLICT', 'payg.alreadyStarted');
    if (org.status !== 'active') throw new AppError('PRECONDITION_FAILED', 'payg.notVerified');
    const [profile] = await tx.select({ orgId: billingProfiles.orgId }).from(billingProfiles).where(eq(billingProfiles.orgId, actor.org.id));
    if (!profile) throw new AppError('PRECONDITION_FAILED', 'payg.billingProfileMissing');
    await tx.update(organisations).set({ priceListAcceptedAt: now, priceListAcceptedBy: actor.userId }).where(eq(organisations.id, actor.org.id));
    const audit = { actorUserId: actor.userId, orgId: actor.org.id, action: 'billing.price_list_accepted', targetType: 'organisation', targetId: actor.org.id } as const;
    // Any credit line, active or ended: staff have set this company's money; the acceptance adds none.
    const [existingLine] = await tx.select({ id: allocations.id }).from(allocations).where(and(eq(allocations.orgId, actor.org.id), eq(allocations.unit, 'cents'))).limit(1);
    if (existingLine) {
      await recordAudit(tx, { ...audit, data: { starterLine: false, monthlyCapCents: org.cap } });
      return { projectId: null, allocationId: null, creditCents: 0 };
    }
    const cap = org.cap ?? terms.startingCreditCents;
    if (org.cap === null) await tx.update(organisations).set({ monthlyCapCents: cap }).where(eq(organisations.id, actor.org.id));
    const project = await insertProject(tx, actor, { title: 'Pay as you go', abstract: 'Jobs paid from the credit line the price list was accepted for.', members: [] });
    const [allocation] = await tx
      .insert(allocations)
      .values({ projectId: project.id, orgId: actor.org.id, resourceClassId: null, unit: 'cents', periodStart: today, periodEnd: addDays(today, terms.durationDays), storageGb: terms.storageGb, ...creditLineLimits() })
      .returning({ id: allocations.id });
    await grantBudget(tx, { allocationId: allocation!.id, amount: terms.startingCreditCents, actorUserId: actor.userId, reason: 'starting credit line of pay-as-you-go (price list accepted)' });
    await recordAudit(tx, {
      ...audit,
      data: { starterLine: true, projectId: project.id, allocationId: allocation!.id, creditCents: terms.startingCreditCents, days: terms.durationDays, ...lineChange(0, terms.startingCreditCents), ...capChange(org.cap, cap) },
    });
    return { projectId: project.id, allocationId: allocation!.id, creditCents: terms.startingCreditCents };
  });
}
