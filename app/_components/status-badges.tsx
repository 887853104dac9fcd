import type { MessageKey } from '~/server/i18n/core';
import { Badge } from './ui';

const APPLICATION_TONE = { draft: 'slate', submitted: 'indigo', changes_requested: 'amber', approved: 'green', rejected: 'red' } as const;
const ALLOCATION_TONE = { active: 'green', expired: 'slate', suspended: 'red' } as const;

export function ApplicationStatusBadge({ status, t }: { status: keyof typeof APPLICATION_TONE; t: (key: MessageKey) => string }) {
  return <Badge tone={APPLICATION_TONE[status]}>{t(`applicationStatus.${status}`)}</Badge>;
}

export function AllocationStatusBadge({ status, t }: { status: keyof typeof ALLOCATION_TONE; t: (key: MessageKey) => string }) {
  return <Badge tone={ALLOCATION_TONE[status]}>{t(`allocationStatus.${status}`)}</Badge>;
}
