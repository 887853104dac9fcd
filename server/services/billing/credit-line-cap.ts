// Staff who grant a company a credit line or adjust one decide its monthly cap with it (issue #24): the
// cap is set in the same transaction as the line, only if it differs, recorded in the line's audit row
// with from and to, and the company is told the new line and the cap.
import { eq } from 'drizzle-orm';
import type { Tx } from '~/db/client';
import { organisations } from '~/db/schema';
import { capChange, isValidMonthlyCapCents, MAX_MONTHLY_CAP_CENTS } from '~/server/core/billing/monthly-cap';
import { AppError } from '~/server/errors';
import { budgetKeepers, notifyMembers } from '~/server/services/mail/notifications';

/** What staff decided about the cap with a line: cents, null for no cap, undefined to leave it as it is. */
export type CapChoice = number | null | undefined;

/** checkCapChoice refuses, on the form's field, a cap that is not whole euros from €0 up to the most a cap may be. */
export function checkCapChoice(capCents: CapChoice): void {
  if (capCents !== undefined && !isValidMonthlyCapCents(capCents)) {
    throw new AppError('BAD_REQUEST', 'allocation.capInvalid', { max: MAX_MONTHLY_CAP_CENTS / 100 }, 'capEuros');
  }
}

/**
 * setCapWithLine sets a tenant's monthly cap to staff's choice inside the transaction that changes its
 * line, whose caller holds the organisation's lock (lock order: organisation, then allocation). It
 * returns the cap after and what the line's audit row records of it: from and to when it changed,
 * nothing when it did not.
 */
export async function setCapWithLine(tx: Tx, org: { id: string; monthlyCapCents: number | null }, capCents: CapChoice) {
  if (capCents === undefined || capCents === org.monthlyCapCents) return { capCents: org.monthlyCapCents, audit: {} };
  await tx.update(organisations).set({ monthlyCapCents: capCents }).where(eq(organisations.id, org.id));
  return { capCents, audit: capChange(org.monthlyCapCents, capCents) };
}

/**
 * tellLineAndCap tells who keeps a credit line's budget (its project's PI and managers, the tenant's
 * owners) the line as it now stands and the tenant's monthly cap, on the bell and by mail.
 */
export async function tellLineAndCap(
  tx: Tx,
  line: { id: string; orgId: string; projectId: string; projectTitle: string; grantedCents: number },
  capCents: number | null,
  occasion: 'granted' | 'adjusted',
) {
  const keys = {
    granted: ['notice.creditGranted', 'notice.creditGrantedNoCap'],
    adjusted: ['notice.creditAdjusted', 'notice.creditAdjustedNoCap'],
  } as const;
  const [withCap, noCap] = keys[occasion];
  await notifyMembers(
    tx,
    line.orgId,
    await budgetKeepers(tx, line),
    capCents === null ? noCap : withCap,
    { project: line.projectTitle, line: line.grantedCents / 100, cap: (capCents ?? 0) / 100 },
    `/allocations/${line.id}`,
  );
}
