// The REST API (issue #13): server/api/rest.ts, with the process's database, token check and fair gate
// (server/api/rest-handler.ts). An upload's PATCH and a file's download are taken before Next by the
// portal's HTTP server (server/api/transfers-http.ts) with the same handler; these routes answer them
// where no such server runs in front.
import { processRestHandler } from '~/server/api/rest-handler';
import { instrumentRoute } from '~/server/observability/metrics';

export const dynamic = 'force-dynamic';

// Recorded under one route label: the request scope and X-Request-Id are the REST handler's own (it adds the token).
const rest = instrumentRoute('/api/v1', (req: Request): Promise<Response> => processRestHandler()(req));

export const GET = rest;
export const POST = rest;
export const PUT = rest;
export const PATCH = rest;
export const DELETE = rest;
// HEAD: a download's size, and a resumable upload's offset (tus); OPTIONS: tus's capabilities.
export const HEAD = rest;
export const OPTIONS = rest;
