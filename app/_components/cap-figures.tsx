// A company's monthly cap and spend as staff see them beside a change of its credit lines or cap (the
// credit-request decision, granting a line, adjusting one).
import type { ReactNode } from 'react';
import { formatEuros, formatMonth } from '~/server/i18n/format';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { cx } from './ui';

type Translate = (key: MessageKey, params?: MessageParams) => string;

/** What the items show: the cap now (null: none), this month's spend as the cap counts it, the months before. */
export interface CapFigures {
  capCents: number | null;
  spentThisMonthCents: number;
  spentByMonth: { month: string; cents: number }[];
}

/** One figure of a <dl>: its label and its value. */
function Figure({ label, testId, className, children }: { label: string; testId?: string; className?: string; children: ReactNode }) {
  return (
    <div>
      <dt className="text-slate-500">{label}</dt>
      <dd className={className} data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/** CapFigureItems are the cap and spend figures as items of the caller's <dl>. */
export function CapFigureItems({ figures, t, locale }: { figures: CapFigures; t: Translate; locale: Locale }) {
  return (
    <>
      <Figure label={t('review.creditCapNow')} testId="credit-cap-now" className="tabular-nums">
        {figures.capCents === null ? t('review.creditNoCap') : formatEuros(locale, figures.capCents)}
      </Figure>
      <Figure label={t('review.creditSpentThisMonth')} testId="credit-spent-this-month" className="tabular-nums">
        {formatEuros(locale, figures.spentThisMonthCents)}
      </Figure>
      {figures.spentByMonth.map((m) => (
        <Figure key={m.month} label={t('review.creditSpentIn', { month: formatMonth(locale, m.month) })} className="tabular-nums">
          {formatEuros(locale, m.cents)}
        </Figure>
      ))}
    </>
  );
}

/** TenantCapFigures is a tenant's name, active credit lines, cap and spend, as a panel beside a form that changes them. */
export function TenantCapFigures({ figures, t, locale, className }: { figures: CapFigures & { orgName: string; linesCents: number }; t: Translate; locale: Locale; className?: string }) {
  return (
    <dl className={cx('grid grid-cols-2 gap-2 rounded-md bg-slate-50 p-3 text-sm sm:grid-cols-4', className)} data-testid="credit-tenant-figures">
      <Figure label={t('review.creditTenant')} className="font-medium">
        {figures.orgName}
      </Figure>
      <Figure label={t('credit.linesNow')} className="tabular-nums">
        {formatEuros(locale, figures.linesCents)}
      </Figure>
      <CapFigureItems figures={figures} t={t} locale={locale} />
    </dl>
  );
}
