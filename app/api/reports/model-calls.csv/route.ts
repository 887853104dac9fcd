import { reportCsvRoute } from '../report-csv';

export const dynamic = 'force-dynamic';

/** GET /api/reports/model-calls.csv?from=YYYY-MM-DD&to=YYYY-MM-DD (or ?month=YYYY-MM, ?quarter=YYYY-Qn): model calls through the gateway per project and model, as CSV (docs/CSV.md). */
export const GET = reportCsvRoute('/api/reports/model-calls.csv', 'model-calls', (caller, period) => caller.report.modelCallsCsv({ period }));
