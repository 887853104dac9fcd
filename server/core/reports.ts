// End-of-allocation reports (issue #32 part 6): what an allocation produced, filed by its PI when its
// period ends. Pure rules: when a report is owed, and how publications (DOIs) and data sets are read.

export const REPORT_SUMMARY_MIN = 20;
export const REPORT_SUMMARY_MAX = 20_000;
export const MAX_PUBLICATIONS = 100;
export const MAX_DATASETS = 50;

/** A DOI: the 10. prefix, a registrant code, a slash and a suffix without spaces (https://www.doi.org/the-identifier/resources/handbook). */
const DOI = /^10\.\d{4,9}(?:\.\d+)*\/\S+$/;

/**
 * normaliseDoi reads a DOI as people paste it — bare, with `doi:`, or as a doi.org link — and returns the
 * bare DOI in lower case (DOIs are case-insensitive), or null when it is none.
 */
export function normaliseDoi(raw: string): string | null {
  let s = raw.trim();
  s = s.replace(/^doi:\s*/i, '').replace(/^https?:\/\/(?:dx\.)?doi\.org\//i, '');
  try {
    if (/%[0-9a-f]{2}/i.test(s)) s = decodeURIComponent(s);
  } catch {
    return null;
  }
  s = s.replace(/[.,;]+$/, '');
  return DOI.test(s) && s.length <= 300 ? s.toLowerCase() : null;
}

/** A data set is named by a DOI or an https address; returns the normalised reference or null. */
export function normaliseDatasetRef(raw: string): string | null {
  const doi = normaliseDoi(raw);
  if (doi) return `doi:${doi}`;
  const s = raw.trim();
  if (s.length > 500) return null;
  try {
    const url = new URL(s);
    return url.protocol === 'https:' && url.hostname.includes('.') ? url.toString() : null;
  } catch {
    return null;
  }
}

export interface ReportProblem {
  field: 'summary' | 'publications' | 'datasets';
  key: string;
  params?: Record<string, string | number>;
}

/** parseList splits a pasted list (one per line or separated by spaces; DOIs may hold commas and semicolons) and drops duplicates, keeping order. */
export function parseList(text: string): string[] {
  return [...new Set(text.split(/\s+/).filter((s) => s !== ''))];
}

/** checkReport validates a report; the first problem names its field. */
export function checkReport(input: { summary: string; publications: string[]; datasets: string[] }): { problem: ReportProblem | null; publications: string[]; datasets: string[] } {
  const publications: string[] = [];
  const datasets: string[] = [];
  const summary = input.summary.trim();
  if (summary.length < REPORT_SUMMARY_MIN) return { problem: { field: 'summary', key: 'report.summaryShort', params: { min: REPORT_SUMMARY_MIN } }, publications, datasets };
  if (summary.length > REPORT_SUMMARY_MAX) return { problem: { field: 'summary', key: 'report.summaryLong', params: { max: REPORT_SUMMARY_MAX } }, publications, datasets };
  if (input.publications.length > MAX_PUBLICATIONS) return { problem: { field: 'publications', key: 'report.tooMany', params: { max: MAX_PUBLICATIONS } }, publications, datasets };
  if (input.datasets.length > MAX_DATASETS) return { problem: { field: 'datasets', key: 'report.tooMany', params: { max: MAX_DATASETS } }, publications, datasets };
  for (const raw of input.publications) {
    const doi = normaliseDoi(raw);
    if (!doi) return { problem: { field: 'publications', key: 'report.badDoi', params: { value: raw.slice(0, 80) } }, publications, datasets };
    if (!publications.includes(doi)) publications.push(doi);
  }
  for (const raw of input.datasets) {
    const ref = normaliseDatasetRef(raw);
    if (!ref) return { problem: { field: 'datasets', key: 'report.badDataset', params: { value: raw.slice(0, 80) } }, publications, datasets };
    if (!datasets.includes(ref)) datasets.push(ref);
  }
  return { problem: null, publications, datasets };
}

/**
 * reportOwed: an approved request for a new or renewed allocation owes its report once its period has
 * ended (`periodEnd` is the first day after it, as allocations keep it); a top-up reports with the
 * allocation it topped up.
 */
export function reportOwed(app: { status: string; kind: string; periodEnd: string }, today: string): boolean {
  return app.status === 'approved' && app.kind !== 'top_up' && app.periodEnd <= today;
}

/** doiLink is where a DOI resolves. */
export function doiLink(doi: string): string {
  return `https://doi.org/${doi.split('/').map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join('/')}`;
}
