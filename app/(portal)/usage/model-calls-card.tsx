// The usage page's model calls (issue #29): calls through the OpenAI-compatible gateway in the period, per
// project and model — tokens in and out, what they were charged (euros on a credit line, the same figures
// the month's invoice bills on its token lines; GPU-hours on a research budget) and their energy and CO2e.
// Server-rendered, no client code.
import { ModelCallCells, ModelCallHeads } from '~/app/_components/model-call-figures';
import { Card, Table, Td, Th } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';

type Report = RouterOutputs['report']['modelCalls'];

export function ModelCallsCard({ report, csvHref, t, locale }: { report: Report; csvHref: string; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  if (report.rows.length === 0) return null;
  return (
    <Card
      title={t('usage.modelCalls.title')}
      actions={
        <a href={csvHref} className="rounded-md px-3 py-2 text-sm font-medium text-indigo-700 ring-1 ring-indigo-200 hover:bg-indigo-50" download>
          {t('usage.modelCalls.downloadCsv')}
        </a>
      }
    >
      <Table>
        <thead>
          <tr>
            <Th>{t('review.project')}</Th>
            <Th>{t('usage.modelCalls.model')}</Th>
            <ModelCallHeads t={t} />
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {report.rows.map((r) => (
            <tr key={`${r.projectId}:${r.model}:${r.unit}`} data-testid="usage-model-row">
              <Td>{r.projectTitle}</Td>
              <Td>
                <code className="text-xs">{r.model}</code>
              </Td>
              <ModelCallCells r={r} locale={locale} />
            </tr>
          ))}
          {report.totals.map((r) => (
            <tr key={`total:${r.unit}`} className="bg-slate-50 font-medium" data-testid={`usage-model-total-${r.unit}`}>
              <Td>{t('usage.storage.total')}</Td>
              <Td />
              <ModelCallCells r={r} locale={locale} />
            </tr>
          ))}
        </tbody>
      </Table>
      <p className="mt-3 text-xs text-slate-500">{t('usage.modelCalls.note')}</p>
    </Card>
  );
}
