import type { MessageKey } from '~/server/i18n/core';
import { Badge } from './ui';

const TONE = { SUBMITTING: 'slate', PENDING: 'amber', RUNNING: 'indigo', COMPLETED: 'green', FAILED: 'red', TIMEOUT: 'red', CANCELLED: 'slate', NODE_FAIL: 'red', PREEMPTED: 'slate' } as const;
export type JobStateName = keyof typeof TONE;

export function JobStateBadge({ state, t }: { state: JobStateName; t: (key: MessageKey) => string }) {
  return (
    <span data-testid="job-state" data-state={state}>
      <Badge tone={TONE[state]}>{t(`jobState.${state}`)}</Badge>
    </span>
  );
}
