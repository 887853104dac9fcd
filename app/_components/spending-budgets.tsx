// The company's budgets on the usage page (issue #24): the tenant's monthly cap, each project's monthly and
// total budget and each person's monthly limit, with what is spent against each as submissions count it.
import { Card } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatEuros, formatMonth } from '~/server/i18n/format';

type Overview = RouterOutputs['report']['spending'];

interface Row {
  key: string;
  label: string;
  limitCents: number;
  spentCents: number;
}

/** SpendingBudgets lists every budget with a bar; nothing when the company has none. */
export function SpendingBudgets({ overview, t, locale }: { overview: Overview; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  const rows: Row[] = [];
  if (overview.cap) rows.push({ key: 'cap', label: t('budget.usage.cap'), limitCents: overview.cap.capCents, spentCents: overview.cap.spentCents });
  for (const p of overview.projects) {
    if (p.monthlyCents !== null) rows.push({ key: `pm-${p.projectId}`, label: t('budget.usage.projectMonthly', { project: p.title }), limitCents: p.monthlyCents, spentCents: p.monthSpentCents });
    if (p.totalCents !== null) rows.push({ key: `pt-${p.projectId}`, label: t('budget.usage.projectTotal', { project: p.title }), limitCents: p.totalCents, spentCents: p.totalSpentCents });
  }
  for (const person of overview.people) rows.push({ key: `u-${person.userId}`, label: t('budget.usage.personMonthly', { person: person.name }), limitCents: person.monthlyCents, spentCents: person.monthSpentCents });
  if (rows.length === 0) return null;
  return (
    <Card title={t('budget.usage.title', { month: formatMonth(locale, overview.month) })}>
      <p className="mb-4 text-xs text-slate-500">{t('budget.usage.rule')}</p>
      <ul className="space-y-4">
        {rows.map((row) => {
          const percent = row.limitCents > 0 ? Math.floor((row.spentCents * 100) / row.limitCents) : row.spentCents > 0 ? 100 : 0;
          const figure = t('budget.usage.figure', { spent: formatEuros(locale, row.spentCents), limit: formatEuros(locale, row.limitCents), percent });
          const tone = percent >= 100 ? 'bg-red-600' : percent >= 80 ? 'bg-amber-500' : 'bg-indigo-600';
          return (
            <li key={row.key} data-testid="spending-budget">
              <div className="flex flex-wrap items-baseline justify-between gap-x-4 gap-y-1 text-sm">
                <span className="min-w-0 font-medium break-words">{row.label}</span>
                <span className="tabular-nums text-slate-700">{figure}</span>
              </div>
              <div className="mt-1 h-2.5 w-full overflow-hidden rounded-full bg-slate-100" role="img" aria-label={`${row.label}: ${figure}`}>
                <div className={tone} style={{ width: `${Math.min(100, percent)}%`, height: '100%' }} />
              </div>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}
