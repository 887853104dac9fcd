import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import Link from 'next/link';
import { Alert, Badge, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatBytes, formatDay, formatEuros } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { formatNumber } from '~/server/i18n/core';
import { StartPayAsYouGoButton } from './start-button';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('prices.title') };
}

/** The price list of the tenant's kind: a GPU-hour of each resource class, its energy and CO2e at its site. */
export default async function PricesPage({ searchParams }: { searchParams: Promise<{ started?: string }> }) {
  const { started } = await searchParams;
  await requireUser();
  const { t, locale } = await getT();
  const caller = await api();
  const org = await caller.organisation.current().catch(() => undefined);
  if (!org) notFound();
  const [{ rows, storage, payAsYouGo }, billing] = await Promise.all([caller.catalogue.priceList(), org.kind === 'company' ? caller.organisation.billingProfile() : Promise.resolve(null)]);
  const kwh = (wh: number) => `${formatNumber(locale, wh / 1000)} kWh`;
  const util = rows[0]?.assumedGpuUtilPercent ?? 90;
  return (
    <div className="space-y-6">
      <PageHeader title={t('prices.title')} subtitle={t('prices.subtitle', { kind: t(`kind.${org.kind}`) })} />
      <Card>
        <Table>
          <thead>
            <tr>
              <Th>{t('prices.resourceClass')}</Th>
              <Th>{t('prices.site')}</Th>
              <Th className="text-right">{t('prices.perGpuHour')}</Th>
              <Th className="text-right">{t('prices.itEnergy')}</Th>
              <Th className="text-right">{t('prices.facilityEnergy')}</Th>
              <Th className="text-right">{t('prices.co2e')}</Th>
              <Th>{t('prices.forYou')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {rows.map((row) => (
              <tr key={row.resourceClassId} data-testid={`price-${row.resourceClassId}`}>
                <Td>
                  <div className="font-medium">{row.name}</div>
                  <div className="text-xs text-slate-600">{row.gpuModel}</div>
                </Td>
                <Td>
                  <div>{row.siteName}</div>
                  <div className="text-xs text-slate-600">
                    {t('prices.siteFigures', { pue: formatNumber(locale, row.pueMilli / 1000), grid: formatNumber(locale, row.gridGco2PerKwh) })}
                    {row.inEu ? '' : ` · ${t('prices.outsideEu')}`}
                  </div>
                </Td>
                <Td className="text-right tabular-nums">{formatEuros(locale, row.centsPerGpuHour)}</Td>
                <Td className="text-right tabular-nums">{kwh(row.itWhPerGpuHour)}</Td>
                <Td className="text-right tabular-nums">{kwh(row.facilityWhPerGpuHour)}</Td>
                <Td className="text-right tabular-nums">{`${formatNumber(locale, row.co2eGramsPerGpuHour)} g`}</Td>
                <Td>{row.allowed ? <Badge tone="green">{t('prices.available')}</Badge> : <Badge tone="slate">{t('prices.excludedByResidency', { rule: t(`residency.${org.residency}`) })}</Badge>}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
        <p className="mt-4 text-xs text-slate-600">{t('prices.note', { util })}</p>
      </Card>
      {/* Storage (issue #27): a TB-month in each site's workspaces; research tenants see their use, unpriced. */}
      <Card title={t('prices.storage')}>
        <Table>
          <thead>
            <tr>
              <Th>{t('prices.site')}</Th>
              <Th className="text-right">{t('prices.perTbMonth')}</Th>
              <Th>{t('prices.forYou')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {storage.map((row) => (
              <tr key={row.siteId} data-testid={`storage-price-${row.siteId}`}>
                <Td>{row.siteName}</Td>
                <Td className="text-right tabular-nums">{org.kind === 'company' ? formatEuros(locale, row.centsPerTbMonth) : t('prices.storageNotCharged')}</Td>
                <Td>{row.allowed ? <Badge tone="green">{t('prices.available')}</Badge> : <Badge tone="slate">{t('prices.excludedByResidency', { rule: t(`residency.${org.residency}`) })}</Badge>}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
        <p className="mt-4 text-xs text-slate-600">{t('prices.storageNote', { payg: formatBytes(locale, payAsYouGo.storageGb * 1_000_000_000) })}</p>
      </Card>
      {org.kind === 'company' && (
        <Card title={org.hasCreditLine && !org.priceListAcceptedAt ? t('payg.acceptOnly') : t('payg.title')}>
          {org.priceListAcceptedAt ? (
            <div className="space-y-3">
              {/* Right after the owner accepted (the button sends them here): the confirmation stays on the page. */}
              {started === '1' && <Alert tone="success">{t('payg.done', { credit: formatEuros(locale, payAsYouGo.startingCreditCents) })}</Alert>}
              {started === 'kept' && <Alert tone="success">{t('payg.keptLines')}</Alert>}
              <p className="text-sm text-slate-700">{t('payg.acceptedOn', { date: formatDay(locale, org.priceListAcceptedAt.toISOString().slice(0, 10)) })}</p>
            </div>
          ) : (
            <div className="space-y-3 text-sm text-slate-700">
              {/* A company with a credit line from staff accepts without any money moving (startPayAsYouGo). */}
              <p>{org.hasCreditLine ? t('payg.establishedIntro') : t('payg.intro', { credit: formatEuros(locale, payAsYouGo.startingCreditCents), days: formatNumber(locale, payAsYouGo.durationDays) })}</p>
              {org.status !== 'active' ? (
                <Alert>{t('payg.needsVerification')}</Alert>
              ) : !billing ? (
                <Alert>
                  {t('payg.needsBillingProfile')}{' '}
                  <Link href="/organisation" className="font-medium text-indigo-700 hover:underline">
                    {t('billing.title')}
                  </Link>
                </Alert>
              ) : org.myRole !== 'owner' ? (
                <p className="text-xs text-slate-500">{t('payg.ownerOnly')}</p>
              ) : (
                <StartPayAsYouGoButton keepsLines={org.hasCreditLine} />
              )}
            </div>
          )}
        </Card>
      )}
    </div>
  );
}
