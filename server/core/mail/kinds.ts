// The kinds of mail a person may get from the portal, each with whether it is sent when the person has
// not chosen (the default), and whether the person may turn it off at all. The in-app bell always
// gets its notice; the mail follows the person's choice. One list: the database enum, the zod enum of
// the preferences procedure and the profile page's checkboxes are derived from it.

export const MAIL_KINDS = [
  // An invitation is addressed to an address, often of no account yet, and carries the only link to join: always sent.
  { kind: 'invitation', emailByDefault: true, adjustable: false },
  { kind: 'application_submitted', emailByDefault: true, adjustable: true },
  { kind: 'application_decided', emailByDefault: true, adjustable: true },
  { kind: 'allocation_expiring', emailByDefault: true, adjustable: true },
  { kind: 'budget_threshold', emailByDefault: true, adjustable: true },
  { kind: 'monthly_cap_reached', emailByDefault: true, adjustable: true },
  // Busy submitters run hundreds of jobs a day: a mail per job only for those who ask for it.
  { kind: 'job_finished', emailByDefault: false, adjustable: true },
  { kind: 'invoice_issued', emailByDefault: true, adjustable: true },
  { kind: 'tenant_status', emailByDefault: true, adjustable: true },
  // Reviewers: the reviews that are due soon or overdue (one mail a day at most).
  { kind: 'review_reminder', emailByDefault: true, adjustable: true },
  // PIs: an allocation's period ended and its report is due.
  { kind: 'report_due', emailByDefault: true, adjustable: true },
] as const;

export type MailKind = (typeof MAIL_KINDS)[number]['kind'];

export const MAIL_KIND_NAMES = MAIL_KINDS.map((k) => k.kind) as unknown as readonly [MailKind, ...MailKind[]];

const byKind = new Map<string, (typeof MAIL_KINDS)[number]>(MAIL_KINDS.map((k) => [k.kind, k]));

/** isMailKind tells whether a string names a kind of mail of the list. */
export function isMailKind(value: unknown): value is MailKind {
  return typeof value === 'string' && byKind.has(value);
}

/** wantsEmail decides whether a person gets a kind's mail: their choice where they made one and may, else the kind's default. */
export function wantsEmail(kind: MailKind, chosen: boolean | undefined): boolean {
  const entry = byKind.get(kind)!;
  if (!entry.adjustable || chosen === undefined) return entry.emailByDefault;
  return chosen;
}

/** effectivePreferences lists every kind with whether its mail is sent to a person who chose `chosen`. */
export function effectivePreferences(chosen: ReadonlyMap<MailKind, boolean>): { kind: MailKind; email: boolean; adjustable: boolean; emailByDefault: boolean }[] {
  return MAIL_KINDS.map((k) => ({ kind: k.kind, email: wantsEmail(k.kind, chosen.get(k.kind)), adjustable: k.adjustable, emailByDefault: k.emailByDefault }));
}
