// Resumable uploads from the browser (tus 1.0; server/api/uploads-http.ts), as the signed-in person.
import { createRequestContext } from '~/server/api/context';
import { uploadResponse } from '~/server/api/uploads-http';
import { instrumentRoute } from '~/server/observability/metrics';

export const dynamic = 'force-dynamic';

const upload = instrumentRoute('/api/uploads', async (request: Request) => uploadResponse(await createRequestContext(), request, '/api/uploads'));

export const POST = upload;
export const PATCH = upload;
export const HEAD = upload;
export const DELETE = upload;
export const OPTIONS = upload;
