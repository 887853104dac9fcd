// An allocation's balance, burn-down chart, projection and ledger: shared by tenant and staff pages.
import { formatNumber, type Locale, type MessageKey, type MessageParams } from '~/server/i18n/core';
import { formatAmount, formatBytes, formatDateTime, formatDay, formatDayShort } from '~/server/i18n/format';
import { BudgetBar, BurnDownChart } from './burn-down-chart';
import { AllocationStatusBadge } from './status-badges';
import { Alert, Card, Table, Td, Th } from './ui';

export interface AllocationOverview {
  unit: 'gpu_seconds' | 'cents';
  status: 'active' | 'expired' | 'suspended';
  statusReason: string | null;
  periodStart: string;
  periodEnd: string;
  resourceClassName: string | null;
  maxGpusAtOnce: number | null;
  maxWalltimeSeconds: number | null;
  maxQueuedJobs: number | null;
  /** The storage line, GB (issue #27). */
  storageGb: number;
  balance: { granted: number; charged: number; reserved: number; expired: number; overrun: number; available: number };
  days: { day: string; amount: number }[];
  projection: { ratePerDay: number; exhaustsOn: string | null; exhaustsBeforeEnd: boolean; unusedAtEnd: number; lastDay: string };
  entries: { id: number; kind: string; amount: number; overrun: number; jobId: string | null; reason: string | null; at: Date; actorName: string | null }[];
}

export function AllocationView({ a, t, locale, timeZone }: { a: AllocationOverview; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; timeZone: string }) {
  const fmt = (v: number) => formatAmount(locale, a.unit, v);
  const b = a.balance;
  const stats = [
    ['allocation.granted', b.granted],
    ['allocation.used', b.charged],
    ['allocation.reserved', b.reserved],
    [a.status === 'expired' ? 'allocation.expiredAmount' : 'allocation.remaining', a.status === 'expired' ? b.expired : Math.max(0, b.available)],
  ] as const;
  return (
    <div className="space-y-6">
      <Card title={a.unit === 'cents' ? t('allocation.creditLine') : (a.resourceClassName ?? '')} actions={<AllocationStatusBadge status={a.status} t={t} />}>
        <p className="text-sm text-slate-600">
          {formatDay(locale, a.periodStart)} – {formatDay(locale, a.periodEnd)}
          {a.statusReason && a.status !== 'active' ? ` · ${a.statusReason}` : ''}
        </p>
        <dl className="mt-4 grid grid-cols-2 gap-4 sm:grid-cols-4">
          {stats.map(([key, value]) => (
            <div key={key} className="rounded-md p-3 ring-1 ring-slate-200">
              <dt className="text-xs text-slate-500">{t(key)}</dt>
              <dd className="mt-1 text-xl font-semibold tabular-nums" data-testid={`stat-${key}`}>
                {fmt(value)}
              </dd>
            </div>
          ))}
        </dl>
        <div className="mt-4">
          <BudgetBar granted={b.granted} charged={b.charged} reserved={b.reserved} label={t('allocation.usedOf', { used: fmt(b.charged), granted: fmt(b.granted) })} />
        </div>
        {b.overrun > 0 && (
          <div className="mt-4">
            <Alert tone="warning">{t('allocation.overrun', { amount: fmt(b.overrun) })}</Alert>
          </div>
        )}
        <p className="mt-4 text-sm text-slate-700">
          {a.status !== 'active'
            ? t('allocation.notActive')
            : a.projection.exhaustsOn && a.projection.exhaustsBeforeEnd
              ? t('allocation.exhaustsOnBeforeEnd', { date: formatDay(locale, a.projection.exhaustsOn), rate: fmt(Math.round(a.projection.ratePerDay)) })
              : a.projection.exhaustsOn
                ? t('allocation.expiresUnused', { amount: fmt(a.projection.unusedAtEnd), date: formatDay(locale, a.projection.lastDay), rate: fmt(Math.round(a.projection.ratePerDay)) })
                : t('allocation.noProjection')}
        </p>
        {a.unit === 'gpu_seconds' && (
          <p className="mt-1 text-xs text-slate-500">
            {t('allocation.limits', { gpus: a.maxGpusAtOnce ?? '—', walltime: a.maxWalltimeSeconds ? a.maxWalltimeSeconds / 3600 : '—', queued: a.maxQueuedJobs ?? '—' })}
          </p>
        )}
        <p className="mt-1 text-xs text-slate-500" data-testid="allocation-storage">
          {t(a.unit === 'cents' ? 'project.storage.lineEverySite' : 'project.storage.line', { size: formatBytes(locale, a.storageGb * 1_000_000_000) })}
        </p>
      </Card>
      <Card title={t('allocation.burnDown')}>
        {a.days.length === 0 ? (
          <p className="text-sm text-slate-600">{t('allocation.notStarted')}</p>
        ) : (
          <BurnDownChart
            days={a.days}
            granted={b.granted}
            format={fmt}
            formatDay={(d) => formatDay(locale, d)}
            formatAxisDay={(d) => formatDayShort(locale, d)}
            toAxisUnit={(amount) => (a.unit === 'cents' ? amount / 100 : amount / 3600)}
            formatTick={(v) => formatNumber(locale, v)}
            labels={{
              title: t('allocation.burnDown'),
              daily: t('allocation.dailyUsage'),
              cumulative: t('allocation.cumulative'),
              budget: t('allocation.granted'),
              day: t('allocation.day'),
              cumulativeAxis: t('allocation.axis', { what: t('allocation.cumulative'), unit: t(a.unit === 'cents' ? 'allocation.unitEuros' : 'allocation.unitGpuHours') }),
              dailyAxis: t('allocation.axisDaily', { unit: t(a.unit === 'cents' ? 'allocation.unitEuros' : 'allocation.unitGpuHours') }),
            }}
          />
        )}
      </Card>
      <Card title={t('allocation.ledger')}>
        <p className="mb-3 text-xs text-slate-500">{t('allocation.ledgerLatest', { count: a.entries.length })}</p>
        <Table>
          <thead>
            <tr>
              <Th>{t('staff.audit.when')}</Th>
              <Th>{t('allocation.entryKind')}</Th>
              <Th className="text-right">{t('allocation.amount')}</Th>
              <Th>{t('allocation.job')}</Th>
              <Th>{t('staff.audit.reason')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {a.entries.map((e) => (
              <tr key={e.id} data-testid="ledger-row">
                <Td className="whitespace-nowrap text-slate-600">{formatDateTime(locale, e.at, timeZone)}</Td>
                <Td>{t(`ledgerKind.${e.kind as 'grant'}`)}</Td>
                <Td className="text-right tabular-nums">
                  {fmt(e.amount)}
                  {e.overrun > 0 && <span className="ml-1 text-xs text-amber-700">({t('allocation.overrunShort', { amount: fmt(e.overrun) })})</span>}
                </Td>
                <Td className="font-mono text-xs text-slate-500">{e.jobId ? e.jobId.slice(0, 8) : ''}</Td>
                <Td className="text-slate-700">
                  {e.reason ?? ''}
                  {e.actorName ? <span className="text-slate-500"> · {e.actorName}</span> : null}
                </Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Card>
    </div>
  );
}
