// One line per proposed change, in the reader's language, for the list and the run page.
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatDecimal } from '~/server/i18n/format';

type Change = RouterOutputs['whatIf']['list'][number]['changes'][number];
type T = (key: MessageKey, params?: MessageParams) => string;

/** describeChange renders a change with the classes' and sites' ids as they are (short, and what staff know them by). */
export function describeChange(t: T, locale: Locale, change: Change): string {
  const tr = (key: string, params?: MessageParams) => t(key as MessageKey, params);
  switch (change.kind) {
    case 'nodes':
      return tr('whatIf.change.nodes', { class: change.classId, delta: change.delta > 0 ? `+${change.delta}` : String(change.delta) });
    case 'newClass':
      return tr('whatIf.change.newClass', { id: change.id, site: change.siteId, nodes: change.nodes, gpus: change.gpusPerNode, template: change.templateClassId, share: change.sharePercent, from: change.fromClassId });
    case 'powerCap':
      return change.capKw === null ? tr('whatIf.change.powerCapNone', { site: change.siteId }) : tr('whatIf.change.powerCap', { site: change.siteId, cap: `${formatDecimal(locale, change.capKw, 1)} kW` });
    case 'pue':
      return tr('whatIf.change.pue', { site: change.siteId, pue: formatDecimal(locale, change.pueMilli / 1000, 2) });
    case 'grid':
      return tr('whatIf.change.grid', { site: change.siteId, grid: change.gco2PerKwh });
    case 'policy':
      return tr('whatIf.change.policy', { policy: tr(`whatIf.policy.${change.policy}`) });
  }
}
