// The audit log's kinds of event, one list (issue #24): recordAudit accepts only these, each has its
// text `audit.action.<kind>` in every catalogue (a kind without one fails the typecheck in
// server/i18n/audit.ts), and the staff audit page filters by them. Adding a kind: one line here,
// one line in en.ts and de.ts. Pure.

export const AUDIT_KINDS = [
  'account.created_by_sso',
  'account.email_verified',
  'account.identity_linked',
  'account.identity_unlinked',
  'account.password_changed',
  'account.password_reset',
  'account.password_reset_requested',
  'account.sessions_ended',
  'account.sign_up_attempt',
  'allocation.adjusted',
  'allocation.credit_granted',
  'allocation.expired',
  'allocation.limits_set',
  'allocation.refunded',
  'api.call',
  'api_token.created',
  'api_token.revoked',
  'application.approved',
  'application.changes_requested',
  'application.drafted',
  'application.rejected',
  'application.submitted',
  'auth.locked_out',
  'auth.lockout_lifted',
  'billing.price_list_accepted',
  'call.opened',
  'call.round_closed',
  'billing.profile_changed',
  'billing.profile_created',
  'credit.raised',
  'credit.request_rejected',
  'credit.requested',
  'files.staff_downloaded',
  'files.staff_listed',
  'invitation.revoked',
  'invoice.credit_note_issued',
  'invoice.issued',
  'invoice.payment_recorded',
  'invoice.payment_reversed',
  'invoice.reminder_sent',
  'member.entitled',
  'member.invited',
  'member.joined',
  'member.spend_limit_set',
  'member.removed',
  'member.role_changed',
  'project.budget_set',
  'project.created',
  'project.member_removed',
  'project.member_set',
  'report.filed',
  'review.assigned',
  'review.conflict_declared',
  'review.conflict_overridden',
  'review.declined',
  'review.panel_assigned',
  'review.scored',
  'shared_model.started',
  'shared_model.stopped',
  'tenant.cap_set',
  'tenant.overdue_block_lifted',
  'tenant.reactivated',
  'tenant.signed_up',
  'tenant.sso_optional',
  'tenant.sso_required',
  'tenant.suspended',
  'tenant.verified',
  'whatif.create',
] as const;

export type AuditKind = (typeof AUDIT_KINDS)[number];

/** isAuditKind tells whether a stored action is one of the known kinds (old or foreign rows may not be). */
export function isAuditKind(value: string): value is AuditKind {
  return (AUDIT_KINDS as readonly string[]).includes(value);
}

/** Where the previous page of the audit log ended: its last row's time and id (newest first, ties by id). */
export interface AuditPosition {
  at: Date;
  id: number;
}

/** encodeAuditCursor turns a page's last row into the opaque cursor of the next page. */
export function encodeAuditCursor(position: AuditPosition): string {
  return Buffer.from(`${position.at.toISOString()}|${position.id}`, 'utf8').toString('base64url');
}

/** decodeAuditCursor reads a cursor back; null for anything encodeAuditCursor did not make. */
export function decodeAuditCursor(cursor: string): AuditPosition | null {
  const [iso, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !iso || !id || !/^[1-9][0-9]{0,17}$/.test(id)) return null;
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) || at.toISOString() !== iso ? null : { at, id: Number(id) };
}
