// Downloads from project workspaces over HTTP, for the browser (session) and the REST API (token): the
// access rule is the `files.stat` procedure's (the project's people; anyone else "not found"), the bytes
// stream from the file opened without following a link (server/services/files/download.ts), with Range.
import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { createCaller } from '~/server/api/root';
import { rootsOf, type Context } from '~/server/api/trpc';
import { AppError } from '~/server/errors';
import { translate, type Locale } from '~/server/i18n';
import { logger } from '~/server/observability/log';
import { fileResponse, folderArchiveResponse } from '~/server/services/files/download';
import { openFile, openFolder, workspaceOf } from '~/server/services/files/workspace';
import { checkPath } from '~/server/core/files/paths';

export interface DownloadTarget {
  projectId: string;
  site: string;
  path: string;
  /** Centre staff reading a tenant's workspace (audited), not one of the project's people. */
  asStaff?: boolean;
}

/** A refusal as a short answer: JSON in the REST shape, or plain text for the browser. */
export type Refusal = (status: number, code: string, message: string, field?: string) => Response;

/** downloadTargetOf reads `site` and `path` from the query string. */
export function downloadTargetOf(projectId: string, url: URL): DownloadTarget {
  return { projectId, site: url.searchParams.get('site') ?? '', path: url.searchParams.get('path') ?? '', ...(url.searchParams.get('as') === 'staff' ? { asStaff: true } : {}) };
}

/**
 * downloadResponse answers a download of a file (Range, resumable) or of a folder (a streamed tar): the
 * caller's access first, then the path opened safely; a folder's descriptor stays open while it streams.
 */
export async function downloadResponse(ctx: Context, req: Request, target: DownloadTarget, refuse: Refusal): Promise<Response> {
  try {
    const where = { projectId: target.projectId, site: target.site, path: target.path };
    const caller = createCaller(ctx);
    const entry = target.asStaff ? await caller.files.staffStat(where) : await caller.files.stat(where);
    const workspace = workspaceOf(rootsOf(ctx), target.site, target.projectId);
    if (entry.type === 'file') {
      const file = await openFile(workspace, target.path);
      return fileResponse(req, file);
    }
    if (entry.type === 'folder') {
      const checked = checkPath(target.path, { allowRoot: true });
      const names = checked.ok ? checked.segments : [];
      const folder = await openFolder(workspace, names);
      const name = names[names.length - 1] ?? `workspace-${target.site}`;
      const response = folderArchiveResponse(req, { path: `/proc/self/fd/${folder.handle.fd}`, name });
      return closingWith(response, () => folder.close());
    }
    throw new AppError('BAD_REQUEST', 'files.path.notFile', {}, 'path');
  } catch (error) {
    return refusalOf(error, ctx.locale, refuse);
  }
}

/** closingWith runs `done` once the response's body has been read to its end, failed or been cancelled. */
function closingWith(response: Response, done: () => Promise<void>): Response {
  if (!response.body) {
    void done();
    return response;
  }
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    void done().catch(() => undefined);
  };
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: end, value } = await reader.read();
        if (end) {
          controller.close();
          close();
        } else controller.enqueue(value);
      } catch (error) {
        close();
        controller.error(error);
      }
    },
    async cancel(reason) {
      await reader.cancel(reason);
      close();
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

/** refusalOf turns an error into its answer: the procedure's code and message, or a logged 500. */
export function refusalOf(error: unknown, locale: Locale, refuse: Refusal): Response {
  if (error instanceof AppError) {
    return refuse(getHTTPStatusCodeFromError(new TRPCError({ code: error.code })), error.code, translate(locale, error.key, error.params), error.field);
  }
  if (error instanceof TRPCError && error.code !== 'INTERNAL_SERVER_ERROR') {
    const cause = error.cause;
    return refuse(getHTTPStatusCodeFromError(error), error.code, error.message, cause instanceof AppError ? cause.field : undefined);
  }
  logger().error({ err: error }, 'a file transfer failed');
  return refuse(500, 'INTERNAL_SERVER_ERROR', translate(locale, 'common.unexpectedError'));
}
