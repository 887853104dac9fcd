// What a company has left to do before and after its first paid job: shown on the dashboard until done.
// Only steps that apply are listed (no price-list step that would open a line beside one from staff),
// each open one with a line saying what it does; `paths` says which way to compute to take.
import Link from 'next/link';
import { Card } from '~/app/_components/ui';
import type { MessageKey, MessageParams } from '~/server/i18n/core';

export interface ChecklistStep {
  key: 'emailConfirmed' | 'verified' | 'billingProfile' | 'priceList' | 'firstJob';
  done: boolean;
  href?: string;
  /** What the step does, shown while it is open. */
  hint?: string;
}

export function CompanyChecklist({ steps, paths, t }: { steps: ChecklistStep[]; paths?: string; t: (key: MessageKey, params?: MessageParams) => string }) {
  const left = steps.filter((s) => !s.done).length;
  return (
    <Card title={t('checklist.title')}>
      <p className="mb-3 text-sm text-slate-600">{t('checklist.left', { left, total: steps.length })}</p>
      {paths && (
        <p className="mb-3 text-sm text-slate-700" data-testid="checklist-paths">
          {paths}
        </p>
      )}
      <ol className="space-y-2 text-sm" data-testid="company-checklist">
        {steps.map((step) => (
          <li key={step.key} className="flex items-start gap-2" data-done={step.done}>
            <span aria-hidden="true" className={step.done ? 'text-emerald-700' : 'text-slate-400'}>
              {step.done ? '✓' : '○'}
            </span>
            <span className={step.done ? 'text-slate-500' : 'text-slate-800'}>
              <span className="sr-only">{step.done ? t('checklist.done') : t('checklist.todo')}: </span>
              {step.href && !step.done ? (
                <Link href={step.href} className="font-medium text-indigo-700 hover:underline">
                  {t(`checklist.${step.key}`)}
                </Link>
              ) : (
                t(`checklist.${step.key}`)
              )}
              {step.hint && !step.done && <span className="block text-xs text-slate-600">{step.hint}</span>}
            </span>
          </li>
        ))}
      </ol>
    </Card>
  );
}
