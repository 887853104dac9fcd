'use client';
// The budgets the scheduler enforces itself: the last sync (and what it read back differently) and the
// jobs it holds on a budget limit, each marked when the portal disagrees (drift). Shown only for a
// scheduler that enforces budgets; an unreachable one is said so, the rest of the page still renders.
import { useQuery } from '@tanstack/react-query';
import { useT } from '~/app/_components/i18n';
import { Alert, Badge, Card, Table, Td, Th } from '~/app/_components/ui';
import { formatCount, formatDateTime, formatGpuHours } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';

const DRIFT_TONE = { staleLimit: 'red', aroundPortal: 'amber', agreed: 'slate' } as const;

/** Rows of the ledger-vs-accounting table shown at most (the largest differences come first). */
const USAGE_ROWS_SHOWN = 100;

export function BudgetsView() {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const query = useQuery({ ...trpc.staff.schedulerBudgets.queryOptions(), refetchInterval: 15_000 });
  const data = query.data;
  if (!data || !data.enforcing) return null;
  const sync = data.lastSync;
  return (
    <Card title={t('cluster.budgets.title')}>
      <div className="space-y-4" data-testid="scheduler-budgets">
        <p className="text-sm text-slate-600">{t('cluster.budgets.intro')}</p>
        {data.unreachable && <Alert tone="warning">{t('cluster.budgets.unreachable')}</Alert>}
        <section>
          <h3 className="text-sm font-semibold">{t('cluster.budgets.lastSync')}</h3>
          {!sync ? (
            <p className="text-sm text-slate-500">{t('cluster.budgets.never')}</p>
          ) : (
            <div className="space-y-2 text-sm">
              <p>
                {t('cluster.budgets.syncSummary', {
                  at: formatDateTime(locale, sync.at, timeZone),
                  budgets: formatCount(locale, sync.budgets),
                  scope: sync.projects === null ? t('cluster.budgets.allProjects') : t('cluster.budgets.someProjects', { count: sync.projects }),
                })}
              </p>
              {!sync.ok && <Alert tone="error">{t('cluster.budgets.syncFailed', { error: sync.error ?? '' })}</Alert>}
              {sync.ok && sync.mismatches.length === 0 && <p className="text-slate-500">{t('cluster.budgets.noMismatches')}</p>}
              {sync.mismatches.length > 0 && (
                <>
                  <h4 className="font-medium text-red-800">{t('cluster.budgets.mismatches')}</h4>
                  <Table>
                    <thead>
                      <tr>
                        <Th>{t('cluster.budgets.project')}</Th>
                        <Th>{t('cluster.budgets.partition')}</Th>
                        <Th className="text-right">{t('cluster.budgets.asked')}</Th>
                        <Th className="text-right">{t('cluster.budgets.read')}</Th>
                      </tr>
                    </thead>
                    <tbody className="divide-y divide-slate-100">
                      {sync.mismatches.map((m) => (
                        <tr key={`${m.account}/${m.partition}`}>
                          <Td>{m.projectTitle ?? m.account}</Td>
                          <Td>{m.partition}</Td>
                          <Td className="text-right tabular-nums">{formatCount(locale, m.asked)}</Td>
                          <Td className="text-right tabular-nums">{m.read === null ? t('cluster.budgets.missing') : formatCount(locale, m.read)}</Td>
                        </tr>
                      ))}
                    </tbody>
                  </Table>
                </>
              )}
            </div>
          )}
        </section>
        {data.usage && (
          <section data-testid="usage-check">
            <h3 className="text-sm font-semibold">{t('cluster.usage.title')}</h3>
            <p className="text-sm text-slate-600">
              {t('cluster.usage.intro', { since: formatDateTime(locale, data.usage.since, timeZone), at: formatDateTime(locale, data.usage.at, timeZone) })}{' '}
              {t('cluster.usage.agree', { agree: data.usage.rows.filter((r) => r.differenceGpuSeconds === 0).length, total: data.usage.rows.length })}
            </p>
            {data.usage.rows.length > 0 && (
              <Table>
                <thead>
                  <tr>
                    <Th>{t('cluster.budgets.project')}</Th>
                    <Th>{t('cluster.budgets.partition')}</Th>
                    <Th className="text-right">{t('cluster.usage.portal')}</Th>
                    <Th className="text-right">{t('cluster.usage.scheduler')}</Th>
                    <Th className="text-right">{t('cluster.usage.difference')}</Th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-100">
                  {data.usage.rows.slice(0, USAGE_ROWS_SHOWN).map((r) => (
                    <tr key={`${r.account}/${r.partition}`}>
                      <Td>{r.projectTitle ? `${r.projectTitle}${r.orgName ? ` · ${r.orgName}` : ''}` : r.account}</Td>
                      <Td>{r.partition}</Td>
                      <Td className="text-right tabular-nums">{formatGpuHours(locale, r.portalGpuSeconds)}</Td>
                      <Td className="text-right tabular-nums">{formatGpuHours(locale, r.schedulerGpuSeconds)}</Td>
                      <Td className={`text-right tabular-nums ${r.differenceGpuSeconds === 0 ? 'text-slate-500' : 'font-semibold text-amber-800'}`}>
                        {r.differenceGpuSeconds === 0
                          ? t('cluster.usage.equal')
                          : t('cluster.usage.differenceSeconds', { sign: r.differenceGpuSeconds > 0 ? '+' : '−', hours: formatGpuHours(locale, Math.abs(r.differenceGpuSeconds)), seconds: formatCount(locale, Math.abs(r.differenceGpuSeconds)) })}
                      </Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
            {data.usage.rows.length > USAGE_ROWS_SHOWN && <p className="mt-2 text-xs text-slate-500">{t('cluster.usage.more', { count: data.usage.rows.length - USAGE_ROWS_SHOWN })}</p>}
          </section>
        )}
        {data.holds && (
          <section>
            <h3 className="text-sm font-semibold">{t('cluster.budgets.holds')}</h3>
            {data.holds.length === 0 ? (
              <p className="text-sm text-slate-500">{t('cluster.budgets.noHolds')}</p>
            ) : (
              <Table>
                <thead>
                  <tr>
                    <Th>{t('cluster.budgets.job')}</Th>
                    <Th>{t('cluster.budgets.project')}</Th>
                    <Th>{t('cluster.budgets.partition')}</Th>
                    <Th className="text-right">{t('cluster.budgets.gpus')}</Th>
                    <Th>{t('cluster.budgets.reason')}</Th>
                    <Th>{t('cluster.budgets.portalBudget')}</Th>
                    <Th />
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-100">
                  {data.holds.map((h) => (
                    <tr key={h.schedulerJobId}>
                      <Td>
                        <span className="font-mono">{h.schedulerJobId}</span>
                        {h.portalJobId === null && <span className="block text-xs text-slate-500">{t('cluster.budgets.aroundPortal')}</span>}
                      </Td>
                      <Td>{h.projectTitle ? `${h.projectTitle}${h.orgName ? ` · ${h.orgName}` : ''}` : t('cluster.budgets.unknownProject')}</Td>
                      <Td>{h.partition}</Td>
                      <Td className="text-right tabular-nums">{h.gpus}</Td>
                      <Td className="font-mono text-xs">{h.reason}</Td>
                      <Td>{h.portalHasBudget ? t('cluster.budgets.yes') : t('cluster.budgets.no')}</Td>
                      <Td>
                        <Badge tone={DRIFT_TONE[h.drift]}>{t(`cluster.budgets.drift.${h.drift}`)}</Badge>
                      </Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
          </section>
        )}
      </div>
    </Card>
  );
}
