// The centre dashboard's model calls (issue #29): every tenant's calls through the OpenAI-compatible gateway
// in the range, per tenant and model — tokens in and out, what they were charged (euros on credit lines,
// GPU-hours on research budgets), energy and CO2e — and the centre's totals. Server-rendered.
import { ModelCallCells, ModelCallHeads } from '~/app/_components/model-call-figures';
import { Card, Table, Td, Th } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';

type CentreModelCalls = RouterOutputs['centre']['modelCalls'];

/** How many tenant and model rows the card lists (busiest first); the totals count them all. */
const SHOWN = 20;

export function CentreModelCallsCard({ calls, t, locale, kindLabel }: { calls: CentreModelCalls; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; kindLabel: (kind: 'academic' | 'company') => string }) {
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
              <ModelCallHeads t={t} />
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {calls.rows.slice(0, SHOWN).map((r) => (
              <tr key={`${r.orgId}:${r.model}:${r.unit}`} data-testid="centre-model-row">
                <Td>{`${r.name} (${kindLabel(r.kind)})`}</Td>
                <Td>
                  <code className="text-xs">{r.model}</code>
                </Td>
                <ModelCallCells r={r} locale={locale} />
              </tr>
            ))}
            {calls.totals.map((r) => (
              <tr key={`total:${r.unit}`} className="font-semibold" data-testid={`centre-model-total-${r.unit}`}>
                <Td>{t('centre.storage.total')}</Td>
                <Td />
                <ModelCallCells r={r} locale={locale} />
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <p className="mt-3 text-xs text-slate-500">{t('centre.modelCalls.note')}</p>
    </Card>
  );
}
