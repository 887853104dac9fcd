// The staff list of allocations: project, (tenant), class, period, usage bar, status.
import Link from 'next/link';
import { formatAmount, formatDay } from '~/server/i18n/format';
import type { RouterOutputs } from '~/app/_lib/types';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { BudgetBar } from './burn-down-chart';
import { AllocationStatusBadge } from './status-badges';
import { Table, Td, Th } from './ui';

export function AllocationTable({ rows, t, locale, showTenant }: { rows: RouterOutputs['staff']['allocations']; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; showTenant: boolean }) {
  return (
    <Table>
      <thead>
        <tr>
          <Th>{t('review.project')}</Th>
          {showTenant && <Th>{t('staff.audit.tenant')}</Th>}
          <Th>{t('application.resourceClass')}</Th>
          <Th>{t('application.period')}</Th>
          <Th>{t('allocation.used')}</Th>
          <Th>{t('staff.tenants.status')}</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {rows.map(({ allocation: a, projectTitle, orgName, resourceClassName }) => {
          const used = t('allocation.usedOf', { used: formatAmount(locale, a.unit, a.charged), granted: formatAmount(locale, a.unit, a.granted) });
          return (
            <tr key={a.id}>
              <Td>
                <Link href={`/staff/allocations/${a.id}`} className="font-medium text-indigo-700 hover:underline">
                  {projectTitle}
                </Link>
              </Td>
              {showTenant && <Td>{orgName}</Td>}
              <Td>{a.unit === 'cents' ? t('allocation.creditLine') : resourceClassName}</Td>
              <Td className="whitespace-nowrap text-slate-600">
                {formatDay(locale, a.periodStart)} – {formatDay(locale, a.periodEnd)}
              </Td>
              <Td className="min-w-48">
                <p className="text-xs text-slate-600">{used}</p>
                <BudgetBar granted={a.granted} charged={a.charged} reserved={a.reserved} label={used} />
              </Td>
              <Td>
                <AllocationStatusBadge status={a.status} t={t} />
              </Td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}
