// The figures of a row of model calls (issue #29), as the usage page and the centre dashboard show them:
// calls, tokens in and out, what they were charged (euros on a credit line, GPU-hours on a research
// budget), energy (Wh) and CO2e (g) to three decimals — calls are small. Server-rendered.
import { Td, Th } from '~/app/_components/ui';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatCount, formatEuros, formatGpuHours } from '~/server/i18n/format';

/** A row's figures: calls, tokens, the charge in its unit, energy (µWh) and CO2e (µg). */
export type ModelCallFigures = RouterOutputs['report']['modelCalls']['totals'][number];

type T = (key: MessageKey, params?: MessageParams) => string;

/** ModelCallHeads are the figures' column heads. */
export function ModelCallHeads({ t }: { t: T }) {
  return (
    <>
      <Th className="text-right">{t('usage.modelCalls.calls')}</Th>
      <Th className="text-right">{t('usage.modelCalls.tokensIn')}</Th>
      <Th className="text-right">{t('usage.modelCalls.tokensOut')}</Th>
      <Th className="text-right">{t('usage.modelCalls.charged')}</Th>
      <Th className="hidden text-right md:table-cell">{t('usage.modelCalls.energy')}</Th>
      <Th className="hidden text-right md:table-cell">{t('usage.modelCalls.co2e')}</Th>
    </>
  );
}

/** ModelCallCells are a row's figures. */
export function ModelCallCells({ r, locale }: { r: ModelCallFigures; locale: Locale }) {
  const small = (micro: number, unit: string) => `${new Intl.NumberFormat(locale, { minimumFractionDigits: 3, maximumFractionDigits: 3 }).format(micro / 1_000_000)} ${unit}`;
  return (
    <>
      <Td className="text-right tabular-nums">{formatCount(locale, r.calls)}</Td>
      <Td className="text-right tabular-nums">
        <span data-testid="tokens-in">{formatCount(locale, r.inputTokens)}</span>
      </Td>
      <Td className="text-right tabular-nums">
        <span data-testid="tokens-out">{formatCount(locale, r.outputTokens)}</span>
      </Td>
      <Td className="text-right tabular-nums">
        <span data-testid="charged">{r.unit === 'cents' ? formatEuros(locale, r.charged) : formatGpuHours(locale, r.charged)}</span>
      </Td>
      <Td className="hidden text-right tabular-nums md:table-cell">{small(r.energyUwh, 'Wh')}</Td>
      <Td className="hidden text-right tabular-nums md:table-cell">{small(r.co2eUg, 'g')}</Td>
    </>
  );
}
