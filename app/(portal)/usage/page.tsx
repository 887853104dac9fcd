import type { Metadata } from 'next';
import { SpendingBudgets } from '~/app/_components/spending-budgets';
import { UsageSummary } from '~/app/_components/usage-summary';
import { inputClass } from '~/app/_components/field';
import { Alert, Button, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatDateTime, formatCo2eKg, formatDay, formatEuros, formatGpuHours, formatKwh } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { UsagePeriodFields } from './period-fields';
import { StorageCard } from './storage-card';
import { ModelCallsCard } from './model-calls-card';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('usage.title') };
}

type Search = { mode?: string; month?: string; quarter?: string; from?: string; to?: string; groupBy?: string };

export default async function UsagePage({ searchParams }: { searchParams: Promise<Search> }) {
  await requireUser();
  const { t, locale, timeZone } = await getT();
  const q = await searchParams;
  const thisMonth = new Date().toISOString().slice(0, 7);
  const mode = q.mode === 'quarter' || q.mode === 'range' ? q.mode : 'month';
  const period = mode === 'quarter' ? { quarter: q.quarter ?? '' } : mode === 'range' ? { from: q.from ?? '', to: q.to ?? '' } : { month: q.month ?? thisMonth };
  const groupBy = (['project', 'user', 'resourceClass', 'kind'] as const).find((g) => g === q.groupBy) ?? 'project';
  const caller = await api();
  let report: Awaited<ReturnType<typeof caller.report.usage>> | undefined;
  let jobs: Awaited<ReturnType<typeof caller.report.jobs>> = [];
  let storage: Awaited<ReturnType<typeof caller.report.storage>> | undefined;
  let modelCalls: Awaited<ReturnType<typeof caller.report.modelCalls>> | undefined;
  let problem: string | undefined;
  // The company's budgets this month (issue #24); a tenant without any shows nothing.
  const spending = await caller.report.spending().catch(() => undefined);
  try {
    [report, jobs, storage, modelCalls] = await Promise.all([caller.report.usage({ period, groupBy }), caller.report.jobs({ period, limit: 200 }), caller.report.storage({ period }), caller.report.modelCalls({ period })]);
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  const kwh = (wh: number) => formatKwh(locale, wh);
  const kg = (g: number) => formatCo2eKg(locale, g);
  const hours = (s: number) => formatGpuHours(locale, s);
  const csvQuery = new URLSearchParams(Object.entries(period)).toString();
  return (
    <div className="space-y-6">
      <PageHeader title={t('usage.title')} subtitle={t('usage.subtitle')} />
      <form method="get" className="flex flex-wrap items-end gap-4 rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200">
        <UsagePeriodFields mode={mode} month={q.month ?? thisMonth} quarter={q.quarter ?? ''} from={q.from ?? ''} to={q.to ?? ''} />
        <label className="text-sm">
          <span className="block font-medium text-slate-800">{t('usage.groupBy')}</span>
          <select name="groupBy" defaultValue={groupBy} className={`${inputClass} w-44`}>
            {(['project', 'user', 'resourceClass', 'kind'] as const).map((g) => (
              <option key={g} value={g}>
                {t(`usage.by.${g}`)}
              </option>
            ))}
          </select>
        </label>
        <Button type="submit" variant="secondary">
          {t('usage.show')}
        </Button>
        {report && (
          <a href={`/api/reports/usage.csv?${csvQuery}`} className="ml-auto rounded-md px-3 py-2 text-sm font-medium text-indigo-700 ring-1 ring-indigo-200 hover:bg-indigo-50" download>
            {t('usage.downloadCsv')}
          </a>
        )}
      </form>
      {spending && <SpendingBudgets overview={spending} t={t} locale={locale} />}
      {problem && <Alert tone="error">{problem}</Alert>}
      {report && (
        <>
          <p className="text-sm text-slate-600">{t('usage.periodShown', { from: formatDay(locale, report.period.from), to: formatDay(locale, report.period.to) })}</p>
          <p className="text-xs text-slate-500" data-testid="usage-invoice-note">{t('usage.invoiceNote')}</p>
          <UsageSummary report={report} t={t} locale={locale} />
          {storage && <StorageCard report={storage} csvHref={`/api/reports/storage.csv?${csvQuery}`} t={t} locale={locale} />}
          {modelCalls && <ModelCallsCard report={modelCalls} csvHref={`/api/reports/model-calls.csv?${csvQuery}`} t={t} locale={locale} />}
          <Card title={t('usage.perJob', { count: jobs.length })}>
            {jobs.length === 0 ? (
              <p className="text-sm text-slate-600">{t('usage.nothing')}</p>
            ) : (
              <Table>
                <thead>
                  <tr>
                    <Th>{t('jobs.name')}</Th>
                    <Th>{t('review.project')}</Th>
                    <Th>{t('usage.ended')}</Th>
                    <Th className="text-right">{t('usage.gpuHours')}</Th>
                    <Th className="text-right">{t('usage.cost')}</Th>
                    <Th className="text-right">{t('usage.itEnergy')}</Th>
                    <Th className="text-right">{t('usage.co2e')}</Th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-100">
                  {jobs.map((j) => (
                    <tr key={j.id} data-testid="usage-job">
                      <Td>
                        <a href={`/jobs/${j.id}`} className="text-indigo-700 hover:underline">
                          {j.name}
                        </a>
                      </Td>
                      <Td>{j.projectTitle}</Td>
                      <Td className="whitespace-nowrap text-slate-600">{j.endedAt ? formatDateTime(locale, j.endedAt, timeZone) : ''}</Td>
                      <Td className="text-right tabular-nums">{hours(j.gpuSeconds ?? 0)}</Td>
                      <Td className="text-right tabular-nums">{formatEuros(locale, j.costCents ?? 0)}</Td>
                      <Td className="text-right tabular-nums">{kwh(j.energyWh ?? 0)}</Td>
                      <Td className="text-right tabular-nums">{kg(j.co2eGrams ?? 0)}</Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
          </Card>
        </>
      )}
    </div>
  );
}
