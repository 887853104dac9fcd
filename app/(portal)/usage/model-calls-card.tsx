// The usage page's model calls (issue #29): calls through the OpenAI-compatible gateway in the period, per
// project and model — tokens in and out, what they were charged (euros on a credit line, the same figures
// the month's invoice bills on its token lines; GPU-hours on a research budget) and their energy and CO2e.
// Server-rendered, no client code.
import { Card, Table, Td, Th } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n';
import { formatCount, formatEuros, formatGpuHours } from '~/server/i18n/format';

type Report = RouterOutputs['report']['modelCalls'];

export function ModelCallsCard({ report, csvHref, t, locale }: { report: Report; csvHref: string; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  if (report.rows.length === 0) return null;
  const charged = (unit: 'gpu_seconds' | 'cents', amount: number) => (unit === 'cents' ? formatEuros(locale, amount) : formatGpuHours(locale, amount));
  // Calls are small: energy in Wh and CO2e in grams, to three decimals.
  const small = (micro: number, unit: string) => `${new Intl.NumberFormat(locale, { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(micro / 1_000_000)} ${unit}`;
  const row = (r: Report['totals'][number], key: string, project: string, model: string, total: boolean, testId: string) => (
    <tr key={key} className={total ? 'bg-slate-50 font-medium' : undefined} data-testid={testId}>
      <Td>{project}</Td>
      <Td>
        <code className="text-xs">{model}</code>
      </Td>
      <Td className="text-right tabular-nums">{formatCount(locale, r.calls)}</Td>
      <Td className="text-right tabular-nums">
        <span data-testid="tokens-in">{formatCount(locale, r.inputTokens)}</span>
      </Td>
      <Td className="text-right tabular-nums">
        <span data-testid="tokens-out">{formatCount(locale, r.outputTokens)}</span>
      </Td>
      <Td className="text-right tabular-nums">
        <span data-testid="charged">{charged(r.unit, r.charged)}</span>
      </Td>
      <Td className="hidden text-right tabular-nums md:table-cell">{small(r.energyUwh, 'Wh')}</Td>
      <Td className="hidden text-right tabular-nums md:table-cell">{small(r.co2eUg, 'g')}</Td>
    </tr>
  );
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
            <Th className="text-right">{t('usage.modelCalls.calls')}</Th>
            <Th className="text-right">{t('usage.modelCalls.tokensIn')}</Th>
            <Th className="text-right">{t('usage.modelCalls.tokensOut')}</Th>
            <Th className="text-right">{t('usage.modelCalls.charged')}</Th>
            <Th className="hidden text-right md:table-cell">{t('usage.modelCalls.energy')}</Th>
            <Th className="hidden text-right md:table-cell">{t('usage.modelCalls.co2e')}</Th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {report.rows.map((r) => row(r, `${r.projectId}:${r.model}:${r.unit}`, r.projectTitle, r.model, false, 'usage-model-row'))}
          {report.totals.map((r) => row(r, `total:${r.unit}`, t('usage.storage.total'), '', true, `usage-model-total-${r.unit}`))}
        </tbody>
      </Table>
      <p className="mt-3 text-xs text-slate-500">{t('usage.modelCalls.note')}</p>
    </Card>
  );
}
