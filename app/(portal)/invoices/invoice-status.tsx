// An invoice's payment status as a badge (derived on the server: server/core/billing/payments.ts).
import { Badge } from '~/app/_components/ui';
import type { InvoiceStatus } from '~/server/core/billing/payments';
import type { MessageKey, MessageParams } from '~/server/i18n/core';

const TONE = { issued: 'slate', partlyPaid: 'amber', paid: 'green', overdue: 'red' } as const;
const LABEL: Record<InvoiceStatus, MessageKey> = { issued: 'invoice.status.issued', partlyPaid: 'invoice.status.partlyPaid', paid: 'invoice.status.paid', overdue: 'invoice.status.overdue' };

export function InvoiceStatusBadge({ status, t }: { status: InvoiceStatus; t: (key: MessageKey, params?: MessageParams) => string }) {
  return <Badge tone={TONE[status]}>{t(LABEL[status])}</Badge>;
}
