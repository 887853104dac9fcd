// Resumable uploads over HTTP (the tus protocol 1.0, @tus/server), for the browser (`/api/uploads`, the
// session) and the REST API (`/api/v1/uploads`, a token with files:write). An upload is created with its
// target in the Upload-Metadata (projectId, site, path); the `files.startUpload` procedure decides who may
// write there. Each later request (HEAD to learn the offset, PATCH to send more, DELETE to give up) must
// come from the person who started it, for the same tenant — anyone else is told the upload does not exist.
// When the last byte arrives the file is hashed and moved into the workspace; the answer carries
// `Upload-Sha256` and `Upload-Path`.
import { MemoryLocker, Server, type Upload } from '@tus/server';
import { createCaller } from '~/server/api/root';
import { rootsOf, type Context } from '~/server/api/trpc';
import { env } from '~/server/env.js';
import { translate } from '~/server/i18n';
import { logger } from '~/server/observability/log';
import { apiSecurityHeaders } from '~/server/security-headers';
import { placeUpload, siteOfUpload, SiteUploadStore, newUploadId, TusRefusal, MAX_UPLOAD_BYTES } from '~/server/services/files/uploads';
import { workspaceOf, type SiteRoots } from '~/server/services/files/workspace';
import { recordStorageChange } from '~/server/services/files/storage';
import { refusalOf } from './files-http';

interface Shared {
  stores: Map<SiteRoots, SiteUploadStore>;
  locker: MemoryLocker;
  /** When an upload's person was last found to have access (uploadId:userId → ms). */
  checked: Map<string, number>;
}

/** How long a check that the person may still write the project's workspace holds for their upload's next requests. */
const ACCESS_RECHECK_MS = 30_000;

// One locker per process: two PATCHes of one upload never write at once.
const shared: Shared = ((globalThis as { __portalUploads?: Shared }).__portalUploads ??= { stores: new Map(), locker: new MemoryLocker(), checked: new Map() });

function storeOf(roots: SiteRoots): SiteUploadStore {
  let store = shared.stores.get(roots);
  if (!store) {
    store = new SiteUploadStore(roots);
    shared.stores.set(roots, store);
  }
  return store;
}

/** What the portal keeps in an upload's metadata beside the client's (projectId, site, path, filename). */
interface UploadMeta {
  projectId: string;
  site: string;
  path: string;
  userId: string;
  orgId: string;
}

function metaOf(upload: Upload): UploadMeta | null {
  const m = upload.metadata ?? {};
  if (!m.projectId || !m.site || !m.path || !m.userId || !m.orgId) return null;
  return { projectId: m.projectId, site: m.site, path: m.path, userId: m.userId, orgId: m.orgId };
}

/** asTusError turns a refusal into what @tus/server answers with: the status and a one-line message. */
async function asTusError(error: unknown, ctx: Context): Promise<TusRefusal> {
  const answer = refusalOf(error, ctx.locale, (status, _code, message, field) => new Response(field ? `${field}: ${message}` : message, { status }));
  return new TusRefusal(answer.status, await answer.text());
}

/**
 * uploadResponse answers one tus request. `basePath` is where uploads live (`/api/uploads` or
 * `/api/v1/uploads`): an upload's URL is `<basePath>/<site>.<uuid>`.
 */
export async function uploadResponse(ctx: Context, req: Request, basePath: string): Promise<Response> {
  const roots = rootsOf(ctx);
  const datastore = storeOf(roots);
  const userId = ctx.token?.userId ?? ctx.userId;
  const caller = createCaller(ctx);
  const server = new Server({
    path: basePath,
    datastore,
    locker: shared.locker,
    respectForwardedHeaders: env().PORTAL_TRUST_PROXY,
    maxSize: MAX_UPLOAD_BYTES,
    exposedHeaders: ['Upload-Sha256', 'Upload-Path'],
    namingFunction: (_req, metadata) => {
      const site = metadata?.site;
      if (!site || !/^[a-z0-9][a-z0-9-]{0,63}$/.test(site)) throw new TusRefusal(400, `site: ${translate(ctx.locale, 'files.noWorkspaceHere')}`);
      return newUploadId(site);
    },
    onUploadCreate: async (_req, upload) => {
      const m = upload.metadata ?? {};
      try {
        const who = await caller.files.startUpload({ projectId: m.projectId ?? '', site: m.site ?? '', path: m.path ?? '', size: upload.size ?? null });
        return { metadata: { ...m, projectId: m.projectId!, site: m.site!, path: m.path!, userId: who.userId, orgId: who.orgId } };
      } catch (error) {
        throw await asTusError(error, ctx);
      }
    },
    onIncomingRequest: async (request, uploadId) => {
      if (request.method === 'POST' || request.method === 'OPTIONS') return;
      // Only the person who started it, acting for the same tenant, sees an upload at all.
      const site = siteOfUpload(uploadId);
      let upload: Upload;
      try {
        if (!site || !userId) throw new Error('not theirs');
        upload = await datastore.getUpload(uploadId);
      } catch {
        throw new TusRefusal(404, translate(ctx.locale, 'files.uploadNotFound'));
      }
      const meta = metaOf(upload);
      const tenantOk = ctx.token ? ctx.token.orgId === meta?.orgId : true;
      if (!meta || meta.userId !== userId || !tenantOk || meta.site !== site) throw new TusRefusal(404, translate(ctx.locale, 'files.uploadNotFound'));
      // Still one of the project's people (the tenant and the project are checked again) — at most every
      // ACCESS_RECHECK_MS per upload and person: a 1 GB upload is 64 requests, each would pay for it.
      const key = `${uploadId}:${userId}`;
      if ((shared.checked.get(key) ?? 0) > Date.now() - ACCESS_RECHECK_MS) return;
      try {
        await caller.files.stat({ projectId: meta.projectId, site: meta.site, path: '' });
      } catch (error) {
        shared.checked.delete(key);
        throw await asTusError(error, ctx);
      }
      if (shared.checked.size > 10_000) shared.checked.clear();
      shared.checked.set(key, Date.now());
    },
    onUploadFinish: async (_req, upload) => {
      const meta = metaOf(upload);
      if (!meta || !upload.storage?.path) throw new TusRefusal(500, translate(ctx.locale, 'common.unexpectedError'));
      try {
        const placed = await placeUpload(workspaceOf(roots, meta.site, meta.projectId), upload.storage.path, meta.path, datastore.takeHash(upload.id, upload.size ?? upload.offset));
        logger().info({ uploadId: upload.id, projectId: meta.projectId, site: meta.site, bytes: placed.bytes }, 'an upload landed in its workspace');
        // The workspace's storage grows by the file at once (issue #27); should booking fail, the file stays and the worker's next scan counts it.
        await recordStorageChange(ctx.db, { orgId: meta.orgId, projectId: meta.projectId, siteId: meta.site, deltaBytes: placed.bytes, now: ctx.now() }).catch((error: unknown) =>
          logger().warn({ err: error, uploadId: upload.id, projectId: meta.projectId, site: meta.site }, 'booking an upload’s storage failed; the next scan counts it'),
        );
        return { headers: { 'Upload-Sha256': placed.sha256, 'Upload-Path': encodeURIComponent(placed.path) } };
      } catch (error) {
        throw await asTusError(error, ctx);
      }
    },
  });
  const response = await server.handleWeb(req);
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(apiSecurityHeaders({ https: (env().PORTAL_URL ?? '').startsWith('https://') }))) headers.set(name, value);
  headers.set('cache-control', 'no-store');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
