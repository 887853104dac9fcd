// A file (Range, resumable) or a folder (a streamed tar) of a project's workspace, for the signed-in
// person: server/api/files-http.ts. `?site=<site id>&path=<path in the workspace>`.
import { createRequestContext } from '~/server/api/context';
import { downloadResponse, downloadTargetOf } from '~/server/api/files-http';
import { instrumentRoute } from '~/server/observability/metrics';

export const dynamic = 'force-dynamic';

const download = instrumentRoute('/api/projects/[projectId]/files/download', async (request: Request, { params }: { params: Promise<{ projectId: string }> }) => {
  const { projectId } = await params;
  const refuse = (status: number, _code: string, message: string, field?: string) =>
    new Response(`${field ? `${field}: ` : ''}${message}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } });
  return downloadResponse(await createRequestContext(), request, downloadTargetOf(projectId, new URL(request.url)), refuse);
});

export const GET = download;
export const HEAD = download;
