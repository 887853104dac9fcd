// Resumable uploads (the tus protocol, @tus/server) into project workspaces. An upload is staged in its
// site's `.uploads` folder (beside the workspaces, on the same filesystem, so placing it is a rename),
// one file per upload named `<site>.<uuid>`, its bytes written as they arrive (upload-receive.ts) and
// hashed meanwhile in a worker thread (SHA-256, upload-hash.ts); when its last byte arrives it is moved
// to its path in the workspace — through the parent folder opened without following links.
import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, createReadStream, mkdirSync } from 'node:fs';
import { chmod, chown, lstat, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FileConfigstore, FileStore } from '@tus/file-store';
import { DataStore, Upload } from '@tus/utils';
import type { Readable } from 'node:stream';
import { AppError } from '~/server/errors';
import { checkPath } from '~/server/core/files/paths';
import { HASH_STEP_BYTES, UploadHasher } from './upload-hash';
import { receiveAt, type Body, type Received } from './upload-receive';
import { groupIdOf, makeFolders, openFolder, pathRefused, type SiteRoots, type Workspace } from './workspace';

const UPLOAD_ID = /^([a-z0-9][a-z0-9-]{0,63})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The largest file one upload may bring (10 TiB); a project's storage line limits it further. */
export const MAX_UPLOAD_BYTES = 10 * 1024 ** 4;

/** An unfinished upload is kept this long after it was started, then removed (the worker's sweep). */
export const UPLOAD_EXPIRY_MS = 7 * 24 * 3600 * 1000;

/** A refusal as @tus/server answers it (it reads `status_code` and `body` off what a hook throws). */
export class TusRefusal extends Error {
  readonly body: string;
  constructor(readonly status_code: number, message: string) {
    super(message);
    this.body = `${message}\n`;
  }
}

/** The process's hash worker (one for every site's uploads). */
export function uploadHasher(): UploadHasher {
  return ((globalThis as { __portalUploadHasher?: UploadHasher }).__portalUploadHasher ??= new UploadHasher());
}

/** newUploadId names a new upload of a site. */
export function newUploadId(siteId: string): string {
  return `${siteId}.${randomUUID()}`;
}

/** siteOfUpload is the site an upload id names, or null for an id the portal never made. */
export function siteOfUpload(id: string): string | null {
  return UPLOAD_ID.exec(id)?.[1] ?? null;
}

/** The staging folder of a site's uploads. */
export function stagingDir(roots: SiteRoots, siteId: string): string {
  return path.join(roots.rootOf(siteId), '.uploads');
}

/**
 * SiteUploadStore is the tus data store: each site's uploads in that site's staging folder (a FileStore
 * per site), chosen by the upload id's site. Ids not of the portal's form are unknown (404).
 */
/**
 * The upload's metadata (`<id>.json`: offset, length, metadata), written whole or not at all: tus's own
 * store truncates and rewrites the file in place, so a HEAD or PATCH reading it while a PATCH records its
 * offset could find it empty, count the upload as gone and answer 404 (a client then starts over; CI
 * saw it). A new file is written beside it and renamed over it.
 */
export class AtomicConfigstore extends FileConfigstore {
  constructor(private readonly folder: string) {
    super(folder);
  }

  override async set(key: string, value: Upload): Promise<void> {
    // The key is an upload id the portal made (newUploadId): a name in the folder, never a path.
    if (!siteOfUpload(key)) throw new Error(`not an upload id: ${JSON.stringify(key)}`);
    const file = path.join(this.folder, `${key}.json`);
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, JSON.stringify(value), { mode: 0o600 });
    try {
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
}

export class SiteUploadStore extends DataStore {
  private readonly stores = new Map<string, FileStore>();

  constructor(private readonly roots: SiteRoots) {
    super();
    this.extensions = ['creation', 'creation-with-upload', 'creation-defer-length', 'termination', 'expiration'];
  }

  storeOf(id: string): FileStore {
    const site = siteOfUpload(id);
    if (!site) throw new TusRefusal(404, 'The upload was not found.');
    let store = this.stores.get(site);
    if (!store) {
      // The portal's own: no job, of any tenant, may read an upload before it lands in its workspace.
      const directory = stagingDir(this.roots, site);
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      chmodSync(directory, 0o700);
      store = new FileStore({ directory, configstore: new AtomicConfigstore(directory), expirationPeriodInMilliseconds: UPLOAD_EXPIRY_MS });
      this.stores.set(site, store);
    }
    return store;
  }

  override create(file: Upload): Promise<Upload> {
    return this.storeOf(file.id).create(file);
  }
  override async remove(id: string): Promise<void> {
    await this.storeOf(id).remove(id);
    uploadHasher().forget(id);
  }
  /**
   * receive writes one request's body into an upload from `offset` on (at most `limit` bytes); see
   * receiveAt for how it ends. The hash worker hears where the file's bytes reach as they land (upload-hash.ts).
   */
  async receive(id: string, body: Body, offset: number, o: { limit: number; stop?: AbortSignal }): Promise<Received> {
    const file = path.join(this.storeOf(id).directory, id);
    const hasher = uploadHasher();
    // The worker hears every HASH_STEP_BYTES (each message wakes it), and at the end.
    let told = offset;
    let written = offset;
    try {
      return await receiveAt(file, offset, body, {
        ...o,
        onWritten: (end) => {
          written = end;
          if (end - told < HASH_STEP_BYTES) return;
          hasher.landed(id, file, end);
          told = end;
        },
      });
    } finally {
      if (written > told) hasher.landed(id, file, written);
    }
  }

  /** write is tus's way in (@tus/server, for a creation with its first bytes): the same as a PATCH's. */
  override async write(readable: Readable, id: string, offset: number): Promise<number> {
    const received = await this.receive(id, readable, offset, { limit: Number.MAX_SAFE_INTEGER });
    if (received.end === 'aborted') throw received.error;
    return offset + received.bytes;
  }

  /** digestOf gives the SHA-256 of a complete upload's `size` bytes from the hash worker, or null should it fail (then placing it hashes the file). */
  digestOf(id: string, size: number): Promise<string | null> {
    return uploadHasher().digestOf(id, path.join(this.storeOf(id).directory, id), size);
  }
  override async getUpload(id: string): Promise<Upload> {
    const store = this.storeOf(id);
    try {
      return await store.getUpload(id);
    } catch (error) {
      // Placed already (its bytes moved into the workspace): it stands complete, so a client that asks
      // again — or @tus/server itself, after an empty upload — is told so rather than "not found".
      const placed = await readPlaced(path.join(store.directory, id));
      const config = placed ? await store.configstore.get(id) : undefined;
      if (!placed || !config) throw error;
      return new Upload({ id, size: placed.bytes, offset: placed.bytes, metadata: config.metadata, creation_date: config.creation_date, storage: { type: 'file', path: path.join(store.directory, id) } });
    }
  }
  /** receiptOf tells where a placed upload landed (its receipt beside its record), or null while it is not placed. */
  receiptOf(id: string): Promise<{ path: string; sha256: string; bytes: number } | null> {
    return readPlaced(path.join(this.storeOf(id).directory, id));
  }
  override declareUploadLength(id: string, length: number): Promise<void> {
    return this.storeOf(id).declareUploadLength(id, length);
  }
  override getExpiration(): number {
    return UPLOAD_EXPIRY_MS;
  }
  override async deleteExpired(): Promise<number> {
    let removed = 0;
    for (const store of this.stores.values()) removed += await store.deleteExpired();
    return removed;
  }
}

async function readPlaced(staged: string): Promise<{ path: string; sha256: string; bytes: number } | null> {
  try {
    return JSON.parse(await readFile(`${staged}.placed`, 'utf8')) as { path: string; sha256: string; bytes: number };
  } catch {
    return null;
  }
}

/**
 * sweepUploads removes what uploads left in the sites' staging folders once UPLOAD_EXPIRY_MS has passed
 * since they were last touched: unfinished uploads (their bytes and record) and the records and
 * receipts of placed ones. Returns how many uploads it removed.
 */
export async function sweepUploads(roots: SiteRoots, siteIds: readonly string[], now: Date): Promise<number> {
  let removed = 0;
  for (const siteId of siteIds) {
    const dir = stagingDir(roots, siteId);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue; // no uploads at this site yet
    }
    for (const name of names) {
      if (!name.endsWith('.json') || !siteOfUpload(name.slice(0, -'.json'.length))) continue;
      const base = path.join(dir, name.slice(0, -'.json'.length));
      const times = await Promise.all([base, `${base}.json`, `${base}.placed`].map((f) => lstat(f).then((st) => st.mtimeMs, () => 0)));
      if (now.getTime() - Math.max(...times) < UPLOAD_EXPIRY_MS) continue;
      await Promise.all([base, `${base}.json`, `${base}.placed`].map((f) => rm(f, { force: true })));
      removed++;
    }
  }
  return removed;
}

/** sha256OfFile hashes a file by streaming it (a 1 GB upload is never held in memory). */
export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * placeUpload moves a finished upload's staged file to its path in the workspace (making the folders
 * above it where missing) and returns its SHA-256 and where it landed. A name taken meanwhile (someone
 * else put a file there while this one uploaded) keeps both: this one gets ` (2)`, ` (3)`… before its
 * extension, so a finished upload is never lost.
 */
export async function placeUpload(workspace: Workspace, staged: string, targetPath: string, knownSha256?: string | null): Promise<{ path: string; sha256: string; bytes: number }> {
  const checked = checkPath(targetPath);
  if (!checked.ok) throw pathRefused(checked.problem);
  const names = checked.segments;
  const st = await lstat(staged);
  if (!st.isFile()) throw new Error(`the staged upload ${staged} is not a file`);
  const sha256 = knownSha256 ?? (await sha256OfFile(staged));
  if (names.length > 1) await makeFolders(workspace, names.slice(0, -1).join('/'));
  const folder = await openFolder(workspace, names.slice(0, -1));
  try {
    const leaf = names[names.length - 1]!;
    for (let n = 1; n < 1000; n++) {
      const name = n === 1 ? leaf : numbered(leaf, n);
      try {
        await lstat(folder.at(name));
        continue; // taken
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      await rename(staged, folder.at(name));
      // The file keeps the staging folder's group: it becomes the workspace's, readable by its jobs only.
      const gid = await groupIdOf(workspace);
      await chown(folder.at(name), st.uid, gid ?? st.gid).catch(() => undefined);
      await chmod(folder.at(name), 0o640);
      const landed = { path: [...names.slice(0, -1), name].join('/'), sha256, bytes: st.size };
      // A receipt beside its record: the upload stands complete until the sweep removes both.
      await writeFile(`${staged}.placed`, JSON.stringify(landed), { mode: 0o600 });
      return landed;
    }
    throw new AppError('CONFLICT', 'files.exists', {}, 'path');
  } finally {
    await folder.close();
  }
}

/** `model.safetensors`, 2 → `model (2).safetensors`. */
function numbered(name: string, n: number): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}
