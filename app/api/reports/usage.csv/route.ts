import { reportCsvRoute } from '../report-csv';

export const dynamic = 'force-dynamic';

/** GET /api/reports/usage.csv?from=YYYY-MM-DD&to=YYYY-MM-DD (or ?month=YYYY-MM, ?quarter=YYYY-Qn): the per-job usage table as CSV. */
export const GET = reportCsvRoute('/api/reports/usage.csv', 'usage', (caller, period) => caller.report.csv({ period }));
