// An end-of-allocation report as filed (issue #32): the results, publications linked by DOI, data sets
// linked by DOI or address, who filed it and when. Shown to the project on its request and to staff.
import { doiLink } from '~/server/core/reports';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { formatDate } from '~/server/i18n/format';

export interface AllocationReportView {
  summary: string;
  publications: string[];
  datasets: string[];
  filedAt: Date;
  updatedAt: Date;
  filedByName: string;
}

/** Where a data set reference (`doi:<doi>` or an https address) leads. */
function datasetHref(ref: string): string {
  return ref.startsWith('doi:') ? doiLink(ref.slice(4)) : ref;
}

export function AllocationReport({ report, t, locale }: { report: AllocationReportView; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  const updated = report.updatedAt.getTime() !== report.filedAt.getTime();
  return (
    <div className="space-y-4" data-testid="report-view">
      <p className="text-sm text-slate-600">
        {t('report.filedBy', { name: report.filedByName, date: formatDate(locale, report.filedAt) })}
        {updated && <> · {t('report.updated', { date: formatDate(locale, report.updatedAt) })}</>}
      </p>
      <div>
        <h3 className="text-sm font-semibold text-slate-800">{t('report.summary')}</h3>
        <p className="mt-1 text-sm whitespace-pre-line text-slate-800">{report.summary}</p>
      </div>
      <div className="grid gap-4 sm:grid-cols-2">
        <LinkList title={t('report.publications')} none={t('report.none')} items={report.publications.map((doi) => ({ text: doi, href: doiLink(doi) }))} testId="report-doi" />
        <LinkList title={t('report.datasets')} none={t('report.none')} items={report.datasets.map((ref) => ({ text: ref, href: datasetHref(ref) }))} testId="report-dataset" />
      </div>
    </div>
  );
}

function LinkList({ title, none, items, testId }: { title: string; none: string; items: { text: string; href: string }[]; testId: string }) {
  return (
    <div>
      <h3 className="text-sm font-semibold text-slate-800">{title}</h3>
      {items.length === 0 ? (
        <p className="mt-1 text-sm text-slate-500">{none}</p>
      ) : (
        <ul className="mt-1 space-y-1 text-sm">
          {items.map((item) => (
            <li key={item.text}>
              <a href={item.href} className="break-all text-indigo-700 hover:underline" rel="noopener noreferrer" target="_blank" data-testid={testId}>
                {item.text}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
