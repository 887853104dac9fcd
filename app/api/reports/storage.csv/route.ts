import { reportCsvRoute } from '../report-csv';

export const dynamic = 'force-dynamic';

/** GET /api/reports/storage.csv?from=YYYY-MM-DD&to=YYYY-MM-DD (or ?month=YYYY-MM, ?quarter=YYYY-Qn): storage in TB-months per project and site, then per site, as CSV (docs/CSV.md). */
export const GET = reportCsvRoute('/api/reports/storage.csv', 'storage', (caller, period) => caller.report.storageCsv({ period }));
