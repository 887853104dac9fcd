// One line saying what a project is for: research its field of science, a company its workload and data residency.
import type { MessageKey, MessageParams } from '~/server/i18n/core';

export interface PurposeView {
  fieldOfScience: string | null;
  workloadKind: 'training' | 'fine_tuning' | 'inference' | null;
  dataResidency: 'any' | 'EU' | 'DE' | null;
}

/** purposeLine renders a project's purpose for its card and page header (empty when it says none). */
export function purposeLine(t: (key: MessageKey, params?: MessageParams) => string, purpose: PurposeView): string {
  if (purpose.fieldOfScience) return purpose.fieldOfScience;
  return [purpose.workloadKind && t(`workload.${purpose.workloadKind}`), purpose.dataResidency && t(`residency.${purpose.dataResidency}`)].filter(Boolean).join(' · ');
}
