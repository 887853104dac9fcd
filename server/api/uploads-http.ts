// Resumable uploads over HTTP (the tus protocol 1.0, @tus/server), for the browser (`/api/uploads`, the
// session) and the REST API (`/api/v1/uploads`, a token with files:write). An upload is created with its
// target in the Upload-Metadata (projectId, site, path); the `files.startUpload` procedure decides who may
// write there. Each later request (HEAD to learn the offset, PATCH to send more, DELETE to give up) must
// come from the person who started it, for the same tenant — anyone else is told the upload does not exist.
// The bytes are hashed (SHA-256) as they land; when the last one arrives the file is moved into the
// workspace and its storage booked; the answer carries `Upload-Sha256` and `Upload-Path`.
//
// PATCH — the bytes — is answered here rather than by @tus/server (whose web-stream → Node-stream →
// pipeline path cost a 1 GiB upload a third of its speed, BENCHMARKS.md): the same rules, in tus's order
// (the person's upload, the lock, the offset, the length, the body's limit), the body read straight off
// the request into the staged file (SiteUploadStore.receive). POST, HEAD, DELETE and OPTIONS stay tus's.
import { ERRORS, HEADERS, MemoryLocker, Server, TUS_RESUMABLE, type Upload } from '@tus/server';
import { createCaller } from '~/server/api/root';
import { rootsOf, type Context } from '~/server/api/trpc';
import { env } from '~/server/env.js';
import { translate } from '~/server/i18n';
import { logger } from '~/server/observability/log';
import { apiSecurityHeaders } from '~/server/security-headers';
import { placeUpload, siteOfUpload, SiteUploadStore, newUploadId, TusRefusal, MAX_UPLOAD_BYTES, UPLOAD_EXPIRY_MS } from '~/server/services/files/uploads';
import { workspaceOf, type SiteRoots } from '~/server/services/files/workspace';
import { checkStorageQuota, recordStorageChange } from '~/server/services/files/storage';
import type { Body } from '~/server/services/files/upload-receive';
import { refusalOf } from './files-http';

interface Shared {
  stores: Map<SiteRoots, SiteUploadStore>;
  locker: MemoryLocker;
  /** When an upload's person was last found to have access (uploadId:userId → ms). */
  checked: Map<string, number>;
}

/** How long a check that the person may still write the project's workspace holds for their upload's next requests. */
const ACCESS_RECHECK_MS = 30_000;

/**
 * How long a PATCH goes on taking bytes once another request of its upload asks for the lock (a client
 * that lost its connection and came back): then it stops, keeps what it wrote and lets go — @tus/server's
 * lockDrainTimeout, the same 3 s.
 */
export const LOCK_DRAIN_MS = 3000;

/** The headers the answers let a browser read (tus's, and the portal's two of a finished upload). */
const EXPOSED_HEADERS = [...HEADERS, 'Upload-Sha256', 'Upload-Path'].join(', ');

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
 * `/api/v1/uploads`): an upload's URL is `<basePath>/<site>.<uuid>`. A PATCH's bytes are `body`: the
 * request's own, or — from the portal's HTTP server, which takes PATCHes before Next.js does
 * (server/api/transfers-http.ts) — the Node request itself, read without a conversion to a web stream.
 */
export async function uploadResponse(ctx: Context, req: Request, basePath: string, body: Body | null = req.body): Promise<Response> {
  const roots = rootsOf(ctx);
  const datastore = storeOf(roots);
  const userId = ctx.token?.userId ?? ctx.userId;
  const caller = createCaller(ctx);

  /** admit lets only the person who started an upload, for the same tenant and still one of the project's people, at it; it returns the upload. */
  const admit = async (uploadId: string): Promise<Upload> => {
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
    // Every request of an upload writes (or is part of writing): a token needs files:write for each, as for
    // the POST that started it — else a read-only token of the same person could finish another's upload.
    if (ctx.token && !ctx.token.scopes.includes('files:write')) throw new TusRefusal(403, translate(ctx.locale, 'apiToken.scopeMissing', { scope: 'files:write' }));
    // Still one of the project's people (the tenant and the project are checked again) — at most every
    // ACCESS_RECHECK_MS per upload and person: a 1 GB upload is 64 requests, each would pay for it.
    const key = `${uploadId}:${userId}`;
    if ((shared.checked.get(key) ?? 0) > Date.now() - ACCESS_RECHECK_MS) return upload;
    try {
      await caller.files.stat({ projectId: meta.projectId, site: meta.site, path: '' });
    } catch (error) {
      shared.checked.delete(key);
      throw await asTusError(error, ctx);
    }
    if (shared.checked.size > 10_000) shared.checked.clear();
    shared.checked.set(key, Date.now());
    return upload;
  };

  /** finish places a complete upload into its workspace and books its storage; it returns the answer's headers. */
  const finish = async (upload: Upload): Promise<Record<string, string>> => {
    const meta = metaOf(upload);
    if (!meta || !upload.storage?.path) throw new TusRefusal(500, translate(ctx.locale, 'common.unexpectedError'));
    try {
      const placed = await placeUpload(workspaceOf(roots, meta.site, meta.projectId), upload.storage.path, meta.path, await datastore.digestOf(upload.id, upload.size ?? upload.offset));
      logger().info({ uploadId: upload.id, projectId: meta.projectId, site: meta.site, bytes: placed.bytes }, 'an upload landed in its workspace');
      // The workspace's storage grows by the file at once (issue #27); should booking fail, the file stays and the worker's next scan counts it.
      await recordStorageChange(ctx.db, { orgId: meta.orgId, projectId: meta.projectId, siteId: meta.site, deltaBytes: placed.bytes, now: ctx.now() }).catch((error: unknown) =>
        logger().warn({ err: error, uploadId: upload.id, projectId: meta.projectId, site: meta.site }, 'booking an upload’s storage failed; the next scan counts it'),
      );
      return { 'Upload-Sha256': placed.sha256, 'Upload-Path': encodeURIComponent(placed.path) };
    } catch (error) {
      throw await asTusError(error, ctx);
    }
  };

  let response: Response;
  if (req.method === 'PATCH') {
    response = await patchResponse(ctx, req, body, basePath, datastore, admit, finish);
  } else {
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
        await admit(uploadId);
      },
      onUploadFinish: async (_req, upload) => ({ headers: await finish(upload) }),
    });
    response = await server.handleWeb(req);
  }
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(apiSecurityHeaders({ https: (env().PORTAL_URL ?? '').startsWith('https://') }))) headers.set(name, value);
  headers.set('cache-control', 'no-store');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** tusAnswer is an answer as @tus/server gives one: tus's headers, a one-line body unless 204. */
function tusAnswer(status: number, headers: Record<string, string>, body = ''): Response {
  const all = new Headers({ 'Tus-Resumable': TUS_RESUMABLE, 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED_HEADERS, ...headers });
  if (status === 204) return new Response(null, { status, headers: all });
  all.set('Content-Length', String(Buffer.byteLength(body, 'utf8')));
  return new Response(body, { status, headers: all });
}

/** A refusal thrown on the way (TusRefusal, or one of tus's ERRORS) as its answer; anything else is a 500, logged. */
function refusalAnswer(error: unknown, uploadId: string | null): Response {
  const e = error as { status_code?: unknown; body?: unknown } | null;
  if (e && typeof e.status_code === 'number' && typeof e.body === 'string') return tusAnswer(e.status_code, {}, e.body);
  logger().error({ err: error, uploadId }, 'writing an upload’s bytes failed');
  return tusAnswer(ERRORS.FILE_WRITE_ERROR.status_code, {}, ERRORS.FILE_WRITE_ERROR.body);
}

/** One of tus's ERRORS, as a refusal to throw. */
const tusError = (e: { status_code: number; body: string }) => new TusRefusal(e.status_code, e.body.trimEnd());

const isWholeNumber = (value: string) => /^(0|[1-9][0-9]{0,15})$/.test(value) && Number.isSafeInteger(Number(value));

/**
 * patchResponse takes the bytes of one PATCH (tus 1.0 core, with creation-defer-length): the upload must be
 * the person's (else 404); it is locked while its bytes are written (another request for it asks this one
 * to stop, which it does after LOCK_DRAIN_MS, keeping what it wrote); Upload-Offset must be where it
 * stands (409); Content-Type must be `application/offset+octet-stream` (415); the body may not go past the
 * upload's length (413). A body cut short keeps the bytes that came. The last byte places the upload.
 */
async function patchResponse(
  ctx: Context,
  req: Request,
  body: Body | null,
  basePath: string,
  datastore: SiteUploadStore,
  admit: (uploadId: string) => Promise<Upload>,
  finish: (upload: Upload) => Promise<Record<string, string>>,
): Promise<Response> {
  const version = req.headers.get('tus-resumable');
  if (version === null) return tusAnswer(412, { 'Tus-Version': TUS_RESUMABLE }, 'Tus-Resumable Required\n');
  if (version !== TUS_RESUMABLE) return tusAnswer(412, { 'Tus-Version': TUS_RESUMABLE }, 'Tus-Resumable 1.0.0 Required\n');
  const path = new URL(req.url).pathname;
  const rest = path.startsWith(`${basePath}/`) ? path.slice(basePath.length + 1).replace(/\/$/, '') : '';
  let uploadId: string | null;
  try {
    uploadId = decodeURIComponent(rest);
  } catch {
    uploadId = null;
  }
  if (!uploadId || uploadId.includes('/')) return tusAnswer(404, {}, ERRORS.FILE_NOT_FOUND.body);
  const offsetHeader = req.headers.get('upload-offset');
  if (offsetHeader === null) return tusAnswer(ERRORS.MISSING_OFFSET.status_code, {}, ERRORS.MISSING_OFFSET.body);
  const lengthHeader = req.headers.get('upload-length');
  const contentLengthHeader = req.headers.get('content-length');
  const invalid = [
    ...(isWholeNumber(offsetHeader) ? [] : ['upload-offset']),
    ...(lengthHeader === null || isWholeNumber(lengthHeader) ? [] : ['upload-length']),
    ...(contentLengthHeader === null || isWholeNumber(contentLengthHeader) ? [] : ['content-length']),
  ];
  if (invalid.length > 0) return tusAnswer(400, {}, `Invalid ${invalid.join(' ')}\n`);
  if (req.headers.get('content-type') !== 'application/offset+octet-stream') return tusAnswer(415, {}, 'Content-Type must be application/offset+octet-stream\n');
  const offset = Number(offsetHeader);
  const contentLength = contentLengthHeader === null ? null : Number(contentLengthHeader);

  let lock: ReturnType<MemoryLocker['newLock']> | null = null;
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  try {
    await admit(uploadId);
    // Locked while this request writes: a newer request for the same upload asks it to let go.
    const released = new AbortController();
    const wanted = shared.locker.newLock(uploadId);
    await wanted.lock(req.signal, () => {
      drainTimer ??= setTimeout(() => released.abort(), LOCK_DRAIN_MS);
    });
    // Held only once taken: a request that gave up waiting must not let go of another's lock.
    lock = wanted;
    const upload = await datastore.getUpload(uploadId);
    const created = upload.creation_date ? new Date(upload.creation_date).getTime() : Date.now();
    if (Date.now() > created + UPLOAD_EXPIRY_MS) throw tusError(ERRORS.FILE_NO_LONGER_EXISTS);
    if (upload.offset !== offset) throw tusError(ERRORS.INVALID_OFFSET);
    if (lengthHeader !== null) {
      // creation-defer-length: the length is declared once, not below what arrived, within the
      // largest upload and — as a length given at creation is — within the project's storage.
      const size = Number(lengthHeader);
      if (upload.size !== undefined || size < upload.offset) throw tusError(ERRORS.INVALID_LENGTH);
      if (size > MAX_UPLOAD_BYTES) throw tusError(ERRORS.ERR_MAX_SIZE_EXCEEDED);
      const meta = metaOf(upload);
      if (!meta) throw new TusRefusal(404, translate(ctx.locale, 'files.uploadNotFound'));
      try {
        await checkStorageQuota(ctx.db, { projectId: meta.projectId, siteId: meta.site, askedBytes: size }, ctx.locale);
      } catch (error) {
        throw await asTusError(error, ctx);
      }
      await datastore.declareUploadLength(uploadId, size);
      upload.size = size;
    }
    // What the body may bring: up to the upload's length (or, deferred, the largest upload).
    const room = (upload.size ?? MAX_UPLOAD_BYTES) - upload.offset;
    if (contentLength !== null && contentLength > room) throw tusError(ERRORS.ERR_SIZE_EXCEEDED);
    const limit = contentLength ?? room;
    const complete = () => upload.size !== undefined && upload.offset === upload.size;
    // Placed already (an empty PATCH at its end, again): the answer it had.
    const placed = complete() ? await datastore.receiptOf(uploadId) : null;
    if (placed) return tusAnswer(204, { 'Upload-Offset': String(upload.offset), 'Upload-Sha256': placed.sha256, 'Upload-Path': encodeURIComponent(placed.path) });
    const received =
      limit === 0 || !body
        ? { bytes: 0, end: 'done' as const }
        : await datastore.receive(uploadId, body, upload.offset, { limit, stop: AbortSignal.any([req.signal, released.signal]) });
    clearTimeout(drainTimer);
    upload.offset += received.bytes;
    if (received.end === 'too-long') return tusAnswer(ERRORS.ERR_SIZE_EXCEEDED.status_code, {}, ERRORS.ERR_SIZE_EXCEEDED.body);
    if (received.end === 'aborted' && !complete()) {
      // The sender went away mid-body: what came is kept (a HEAD tells the offset); no one reads this answer.
      logger().info({ uploadId, offset: upload.offset, err: received.error }, 'an upload’s PATCH was cut short; its bytes so far are kept');
      return tusAnswer(ERRORS.ABORTED.status_code, { Connection: 'close' }, ERRORS.ABORTED.body);
    }
    const headers: Record<string, string> = { 'Upload-Offset': String(upload.offset) };
    if (received.end !== 'done') headers.Connection = 'close';
    // The last byte: placed while the lock is still held, so a second PATCH at the end cannot place it twice.
    if (complete()) Object.assign(headers, await finish(upload));
    else headers['Upload-Expires'] = new Date(created + UPLOAD_EXPIRY_MS).toUTCString();
    return tusAnswer(204, headers);
  } catch (error) {
    return refusalAnswer(error, uploadId);
  } finally {
    clearTimeout(drainTimer);
    await lock?.unlock();
  }
}
