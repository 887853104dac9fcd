// The centre dashboard's model calls (issue #29): every tenant's calls through the OpenAI-compatible gateway
// in the range, per tenant and model — tokens in and out, what they were charged (euros on credit lines,
// GPU-hours on research budgets), energy and CO2e — and the centre's totals. Server-rendered.
import { Card, Table, Td, Th } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n';
import { formatCount, formatEuros, formatGpuHours } from '~/server/i18n/format';

type CentreModelCalls = RouterOutputs['centre']['modelCalls'];

/** How many tenant and model rows the card lists (busiest first); the totals count them all. */
const SHOWN = 20;

export function CentreModelCallsCard({ calls, t, locale, kindLabel }: { calls: CentreModelCalls; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; kindLabel: (kind: 'academic' | 'company') => string }) {
  const charged = (unit: 'gpu_seconds' | 'cents', amount: number) => (unit === 'cents' ? formatEuros(locale, amount) : formatGpuHours(locale, amount));
  const small = (micro: number, unit: string) => `${new Intl.NumberFormat(locale, { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(micro / 1_000_000)} ${unit}`;
  const figures = (r: CentreModelCalls['totals'][number]) => (
    <>
      <Td className="text-right tabular-nums">{formatCount(locale, r.calls)}</Td>
      <Td className="text-right tabular-nums">{formatCount(locale, r.inputTokens)}</Td>
      <Td className="text-right tabular-nums">{formatCount(locale, r.outputTokens)}</Td>
      <Td className="text-right tabular-nums">{charged(r.unit, r.charged)}</Td>
      <Td className="hidden text-right tabular-nums md:table-cell">{small(r.energyUwh, 'Wh')}</Td>
      <Td className="hidden text-right tabular-nums md:table-cell">{small(r.co2eUg, 'g')}</Td>
    </>
  );
  return (
    <Card title={t('centre.modelCalls.title')}>
      {calls.rows.length === 0 ? (
        <p className="text-sm text-slate-500">{t('centre.modelCalls.empty')}</p>
      ) : (
        <Table>
          <thead>
            <tr>
              <Th>{t('centre.chart.tenant')}</Th>
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
            {calls.rows.slice(0, SHOWN).map((r) => (
              <tr key={`${r.orgId}:${r.model}:${r.unit}`} data-testid="centre-model-row">
                <Td>{`${r.name} (${kindLabel(r.kind)})`}</Td>
                <Td>
                  <code className="text-xs">{r.model}</code>
                </Td>
                {figures(r)}
              </tr>
            ))}
            {calls.totals.map((r) => (
              <tr key={`total:${r.unit}`} className="font-semibold" data-testid={`centre-model-total-${r.unit}`}>
                <Td>{t('centre.storage.total')}</Td>
                <Td />
                {figures(r)}
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <p className="mt-3 text-xs text-slate-500">{t('centre.modelCalls.note')}</p>
    </Card>
  );
}
