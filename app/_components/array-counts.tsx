// A job array's tasks by state, as chips ("4 running · 10 completed · 6 waiting"): one component for the
// job list and the job page, so both count the same way.
import type { Locale, MessageKey } from '~/server/i18n/core';
import { formatCount } from '~/server/i18n/format';
import { Badge } from './ui';

const ORDER = ['RUNNING', 'PENDING', 'COMPLETED', 'FAILED', 'TIMEOUT', 'NODE_FAIL', 'PREEMPTED', 'CANCELLED'] as const;
const TONE = { RUNNING: 'indigo', PENDING: 'amber', COMPLETED: 'green', FAILED: 'red', TIMEOUT: 'red', NODE_FAIL: 'red', PREEMPTED: 'slate', CANCELLED: 'slate' } as const;

export function ArrayCounts({ counts, t, locale }: { counts: Record<string, number>; t: (key: MessageKey) => string; locale: Locale }) {
  const shown = ORDER.filter((state) => (counts[state] ?? 0) > 0);
  return (
    <span className="inline-flex flex-wrap gap-1" data-testid="array-counts">
      {shown.map((state) => (
        <span key={state} data-state={state} data-count={counts[state]}>
          <Badge tone={TONE[state]}>
            {formatCount(locale, counts[state]!)} {t(`jobState.${state}`)}
          </Badge>
        </span>
      ))}
    </span>
  );
}
