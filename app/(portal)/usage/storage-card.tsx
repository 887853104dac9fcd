// The usage page's storage (issue #27): TB-months per project and site in the period, per site (the figure
// the month's invoice bills) and in total; for companies what they cost. Server-rendered, no client code.
import { Card, Table, Td, Th } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatEuros } from '~/server/i18n/format';

export function StorageCard({ report, csvHref, t, locale }: { report: RouterOutputs['report']['storage']; csvHref: string; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  // Three decimals, as the invoice's storage line shows them.
  const tbMonths = (milli: number) => new Intl.NumberFormat(locale, { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(milli / 1000);
  const cost = (cents: number | null) => (cents === null ? '' : formatEuros(locale, cents));
  const rows = [
    ...report.rows.map((r) => ({ key: `${r.projectId}:${r.siteId}`, project: r.projectTitle, site: r.siteName, milliTbMonths: r.milliTbMonths, costCents: r.costCents, total: false, testId: 'usage-storage-row' })),
    ...report.sites.map((s) => ({ key: `site:${s.siteId}`, project: t('usage.storage.allProjects'), site: s.siteName, milliTbMonths: s.milliTbMonths, costCents: s.costCents, total: true, testId: `usage-storage-site-${s.siteId}` })),
  ];
  return (
    <Card
      title={t('usage.storage.title')}
      actions={
        rows.length > 0 && (
          <a href={csvHref} className="rounded-md px-3 py-2 text-sm font-medium text-indigo-700 ring-1 ring-indigo-200 hover:bg-indigo-50" download>
            {t('usage.storage.downloadCsv')}
          </a>
        )
      }
    >
      {rows.length === 0 ? (
        <p className="text-sm text-slate-600">{t('usage.storage.nothing')}</p>
      ) : (
        <Table>
          <thead>
            <tr>
              <Th>{t('review.project')}</Th>
              <Th>{t('usage.storage.site')}</Th>
              <Th className="text-right">{t('usage.storage.tbMonths')}</Th>
              {report.charged && <Th className="text-right">{t('usage.cost')}</Th>}
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {rows.map((r) => (
              <tr key={r.key} className={r.total ? 'bg-slate-50 font-medium' : undefined} data-testid={r.testId}>
                <Td>{r.project}</Td>
                <Td>{r.site}</Td>
                <Td className="text-right tabular-nums">
                  <span data-testid="tb-months">{tbMonths(r.milliTbMonths)}</span>
                </Td>
                {report.charged && <Td className="text-right tabular-nums">{cost(r.costCents)}</Td>}
              </tr>
            ))}
            <tr className="font-semibold" data-testid="usage-storage-total">
              <Td>{t('usage.storage.total')}</Td>
              <Td />
              <Td className="text-right tabular-nums">{tbMonths(report.totals.milliTbMonths)}</Td>
              {report.charged && <Td className="text-right tabular-nums">{cost(report.totals.costCents)}</Td>}
            </tr>
          </tbody>
        </Table>
      )}
      <p className="mt-3 text-xs text-slate-500">{t(report.charged ? 'usage.storage.noteCompany' : 'usage.storage.noteResearch')}</p>
    </Card>
  );
}
