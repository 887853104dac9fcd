// A project's workspace on a site's filesystem, read and written directly (as Open OnDemand does): no copy
// through the database. The filesystem is hostile input — a job may plant a symlink anywhere in its
// workspace — so every operation here:
//   1. checks the path's names (core/files/paths.ts: no `..`, no absolute path, no encoded separator…);
//   2. opens the parent folder name by name with O_NOFOLLOW | O_DIRECTORY, so no link on the way is followed;
//   3. checks the opened folder's real path (/proc/self/fd/N) is inside the workspace's real path;
//   4. acts on the last name through that open folder (`/proc/self/fd/N/name`), again without following a link.
// Linux only (/proc/self/fd), where the portal runs beside the cluster.
import { constants, type Dirent } from 'node:fs';
import { chmod, chown, lstat, mkdir, open, readdir, readlink, realpath, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '~/server/errors';
import { checkName, checkPath, isInside, SESSION_FOLDER, type PathProblem } from '~/server/core/files/paths';
import { projectGroupName } from '~/server/core/scheduler/identity';
import { jobFolderPath } from '~/server/core/files/job-folder';
import { logger } from '~/server/observability/log';
import { gidOf } from './unix-groups';

/** Where each site's workspaces lie (server/services/files/roots.ts `configuredSiteRoots`; tests pass their own). */
export interface SiteRoots {
  rootOf(siteId: string): string;
  /** The Unix group a project's workspace belongs to (the group its jobs run in), when the portal sets one. */
  groupOf?(projectId: string): Promise<string | null>;
}

/** A project's workspace at one site: its absolute folder. */
export interface Workspace {
  projectId: string;
  siteId: string;
  dir: string;
  /** Finds the Unix group the workspace belongs to (SiteRoots.groupOf), if any. */
  group?: () => Promise<string | null>;
}

/** workspaceOf names a project's workspace at a site: `<site root>/<project group>` (the group its jobs' files belong to). */
export function workspaceOf(roots: SiteRoots, siteId: string, projectId: string): Workspace {
  const groupOf = roots.groupOf?.bind(roots);
  return { projectId, siteId, dir: path.join(roots.rootOf(siteId), projectGroupName(projectId)), ...(groupOf ? { group: () => groupOf(projectId) } : {}) };
}

/** jobDirOf is a job's working folder, absolute: `<workspace>/jobs/<job id>`. */
export function jobDirOf(workspace: Workspace, jobId: string): string {
  return path.join(workspace.dir, jobFolderPath(jobId));
}

const DIR_MODE = 0o2770; // members write, new files keep the project's group, nobody else enters
const NOFOLLOW_DIR = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The refusal of a path, naming the field and the rule broken. */
export function pathRefused(problem: PathProblem | 'link' | 'notFound' | 'exists' | 'notFolder' | 'notFile' | 'intoItself', field = 'path'): AppError {
  if (problem === 'notFound') return new AppError('NOT_FOUND', 'files.notFound', {}, field);
  if (problem === 'exists') return new AppError('CONFLICT', 'files.exists', {}, field);
  return new AppError('BAD_REQUEST', `files.path.${problem}`, {}, field);
}

function parse(input: string, field: string, allowRoot = false): string[] {
  const checked = checkPath(input, { allowRoot });
  if (!checked.ok) throw pathRefused(checked.problem, field);
  return checked.segments;
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Workspaces already made and given their group by this process (checked once each). */
const prepared = new Set<string>();

/**
 * ensureWorkspace makes the workspace folder where it is missing (and the site root above it), 2770:
 * its people write, new files and folders keep its group, nobody else enters. Where the workspace has a
 * Unix group (SiteRoots.groupOf) and the portal may give it (root, CAP_CHOWN, or a member of the group),
 * the folder is given that group, so what the portal writes there is its jobs' to read.
 */
export async function ensureWorkspace(workspace: Workspace): Promise<void> {
  if (prepared.has(workspace.dir)) return;
  await mkdir(path.dirname(workspace.dir), { recursive: true, mode: 0o755 });
  try {
    await mkdir(workspace.dir, { mode: DIR_MODE });
  } catch (error) {
    if (errno(error) !== 'EEXIST') throw error;
  }
  const st = await lstat(workspace.dir);
  if (!st.isDirectory()) return; // refused by the caller
  const group = workspace.group ? await workspace.group() : null;
  const gid = group ? await gidOf(group) : null;
  try {
    if (gid !== null && st.gid !== gid) await chown(workspace.dir, st.uid, gid);
    if ((st.mode & 0o7777) !== DIR_MODE) await chmod(workspace.dir, DIR_MODE); // the umask takes group write from mkdir
  } catch (error) {
    logger().warn({ dir: workspace.dir, group, err: error }, "the workspace's group or mode cannot be set: give it to the project's group, mode 2770");
  }
  prepared.add(workspace.dir);
}

/** groupIdOf is the gid of the workspace's group, or null (none set, or unknown on this host). */
export async function groupIdOf(workspace: Workspace): Promise<number | null> {
  const group = workspace.group ? await workspace.group() : null;
  return group ? gidOf(group) : null;
}

async function workspaceReal(workspace: Workspace): Promise<string> {
  await ensureWorkspace(workspace);
  const st = await lstat(workspace.dir);
  // The workspace folder itself must be a folder, not a link somewhere else.
  if (!st.isDirectory()) throw new Error(`the workspace ${workspace.dir} is not a folder`);
  return realpath(workspace.dir);
}

/** An open folder inside the workspace, held by its descriptor; `at(name)` names an entry through it. */
export interface OpenFolder {
  handle: FileHandle;
  at(name: string): string;
  close(): Promise<void>;
}

async function checkInside(handle: FileHandle, real: string): Promise<void> {
  const where = await readlink(`/proc/self/fd/${handle.fd}`);
  if (where !== real && !where.startsWith(`${real}/`)) throw pathRefused('link');
}

/**
 * openFolder opens the folder of the given names inside the workspace, following no link on the way, and
 * checks where it really is. Missing: NOT_FOUND; a link or a file on the way: refused.
 */
export async function openFolder(workspace: Workspace, names: readonly string[], field = 'path'): Promise<OpenFolder> {
  const real = await workspaceReal(workspace);
  let handle = await open(workspace.dir, NOFOLLOW_DIR);
  try {
    await checkInside(handle, real);
    for (const name of names) {
      let next: FileHandle;
      try {
        next = await open(`/proc/self/fd/${handle.fd}/${name}`, NOFOLLOW_DIR);
      } catch (error) {
        const code = errno(error);
        if (code === 'ENOENT') throw pathRefused('notFound', field);
        if (code === 'ELOOP') throw pathRefused('link', field);
        if (code === 'ENOTDIR') {
          // O_NOFOLLOW | O_DIRECTORY on a link says ENOTDIR: tell a link from a file.
          const st = await lstat(`/proc/self/fd/${handle.fd}/${name}`).catch(() => null);
          throw pathRefused(st?.isSymbolicLink() ? 'link' : 'notFolder', field);
        }
        throw error;
      }
      await handle.close();
      handle = next;
      await checkInside(handle, real);
    }
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  const fd = handle.fd;
  return { handle, at: (name) => `/proc/self/fd/${fd}/${name}`, close: () => handle.close() };
}

async function withParent<T>(workspace: Workspace, names: readonly string[], field: string, act: (folder: OpenFolder, leaf: string) => Promise<T>): Promise<T> {
  const folder = await openFolder(workspace, names.slice(0, -1), field);
  try {
    return await act(folder, names[names.length - 1]!);
  } finally {
    await folder.close();
  }
}

export type EntryType = 'folder' | 'file' | 'link' | 'other';

export interface Entry {
  name: string;
  type: EntryType;
  /** Bytes (a file's); 0 for the others. */
  size: number;
  modifiedAt: Date;
}

function typeOf(d: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): EntryType {
  if (d.isDirectory()) return 'folder';
  if (d.isFile()) return 'file';
  if (d.isSymbolicLink()) return 'link';
  return 'other';
}

/** The order of a listing: folders first, then by name (code points), as a keyset cursor can resume it. */
function keyOf(type: EntryType, name: string): string {
  return `${type === 'folder' ? '0' : '1'}${name}`;
}

export interface Listing {
  entries: Entry[];
  /** Where the next page starts (null: this was the last). */
  nextCursor: string | null;
  /** Entries in the folder in all. */
  total: number;
}

export const MAX_PAGE = 1000;

/**
 * listFolder lists one page of a folder: folders first, then files, by name; `cursor` is the last page's
 * `nextCursor`. A folder of 100,000 entries is read once per page (names and types only, no stat per
 * entry); only the page's entries are stat'ed. A link is listed as a link, never followed.
 */
export async function listFolder(workspace: Workspace, folderPath: string, options: { cursor?: string | null; limit?: number } = {}): Promise<Listing> {
  const names = parse(folderPath, 'path', true);
  const limit = Math.max(1, Math.min(MAX_PAGE, options.limit ?? 200));
  const after = options.cursor ? decodeCursor(options.cursor) : null;
  const folder = await openFolder(workspace, names);
  try {
    const keys = await sortedKeys(folder);
    // The first key after the cursor (binary search: the keys are sorted).
    let from = 0;
    if (after !== null) {
      let hi = keys.length;
      while (from < hi) {
        const mid = (from + hi) >>> 1;
        if (keys[mid]! <= after) from = mid + 1;
        else hi = mid;
      }
    }
    const page = keys.slice(from, from + limit);
    const entries = await Promise.all(
      page.map(async (key) => {
        const name = key.slice(1);
        try {
          const st = await lstat(folder.at(name));
          const type = typeOf(st);
          return { name, type, size: type === 'file' ? st.size : 0, modifiedAt: st.mtime };
        } catch {
          return null; // gone between the read and the stat
        }
      }),
    );
    const last = page[page.length - 1];
    return {
      entries: entries.filter((e): e is Entry => e !== null),
      nextCursor: from + limit < keys.length && last ? encodeCursor(last) : null,
      total: keys.length,
    };
  } finally {
    await folder.close();
  }
}

/**
 * A folder's sorted keys, kept while the folder does not change: paging through 100,000 entries reads the
 * folder once, not once per page. A folder's ctime and mtime move whenever an entry is added, removed or
 * renamed in it, so a key is its device, inode and both times (of the open descriptor: no path raced).
 */
const listings = new Map<string, string[]>();
const LISTING_CACHE_ENTRIES = 500_000;
let listingCacheSize = 0;

async function sortedKeys(folder: OpenFolder): Promise<string[]> {
  const st = await folder.handle.stat({ bigint: true });
  const id = `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
  const known = listings.get(id);
  if (known) {
    // Most recently used last.
    listings.delete(id);
    listings.set(id, known);
    return known;
  }
  const dirents: Dirent[] = await readdir(`/proc/self/fd/${folder.handle.fd}`, { withFileTypes: true });
  // A session's connection folder is the portal's, never listed (core/files/paths.ts SESSION_FOLDER).
  const keys = dirents.filter((d) => d.name !== SESSION_FOLDER).map((d) => keyOf(typeOf(d), d.name));
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Only folders worth it (a small one reads faster than it is looked up), within a bound on memory.
  if (keys.length >= 1000 && keys.length <= LISTING_CACHE_ENTRIES) {
    for (const [oldest, value] of listings) {
      if (listingCacheSize + keys.length <= LISTING_CACHE_ENTRIES) break;
      listings.delete(oldest);
      listingCacheSize -= value.length;
    }
    listings.set(id, keys);
    listingCacheSize += keys.length;
  }
  return keys;
}

function encodeCursor(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[01]/.test(key)) throw new AppError('BAD_REQUEST', 'files.badCursor', {}, 'cursor');
  return key;
}

/** An open regular file inside the workspace, ready to stream. */
export interface OpenFile {
  handle: FileHandle;
  name: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

/** openFile opens a regular file for reading, following no link (a link, a folder or a device is refused). */
export async function openFile(workspace: Workspace, filePath: string, field = 'path'): Promise<OpenFile> {
  const names = parse(filePath, field);
  return withParent(workspace, names, field, async (folder, leaf) => {
    let handle: FileHandle;
    try {
      handle = await open(folder.at(leaf), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      const code = errno(error);
      if (code === 'ENOENT') throw pathRefused('notFound', field);
      if (code === 'ELOOP') throw pathRefused('link', field);
      throw error;
    }
    const st = await handle.stat();
    if (!st.isFile()) {
      await handle.close();
      throw pathRefused(st.isDirectory() ? 'notFile' : 'notFile', field);
    }
    return { handle, name: leaf, size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
  });
}

/** statEntry tells what a path is (a link is reported as a link, not followed). */
export async function statEntry(workspace: Workspace, entryPath: string, field = 'path'): Promise<Entry> {
  const names = parse(entryPath, field, true);
  if (names.length === 0) {
    const st = await lstat(workspace.dir);
    return { name: '', type: 'folder', size: 0, modifiedAt: st.mtime };
  }
  return withParent(workspace, names, field, async (folder, leaf) => {
    try {
      const st = await lstat(folder.at(leaf));
      const type = typeOf(st);
      return { name: leaf, type, size: type === 'file' ? st.size : 0, modifiedAt: st.mtime };
    } catch (error) {
      if (errno(error) === 'ENOENT') throw pathRefused('notFound', field);
      throw error;
    }
  });
}

/** makeFolder makes a new folder (its parent must exist; an existing name is refused). */
export async function makeFolder(workspace: Workspace, folderPath: string): Promise<void> {
  const names = parse(folderPath, 'path');
  await withParent(workspace, names, 'path', async (folder, leaf) => {
    try {
      await mkdir(folder.at(leaf), { mode: DIR_MODE });
    } catch (error) {
      if (errno(error) === 'EEXIST') throw pathRefused('exists');
      throw error;
    }
    // The umask takes group write from mkdir's mode: the project's jobs write into its folders too.
    await chmod(folder.at(leaf), DIR_MODE);
  });
}

/** makeFolders makes a folder and the folders above it where missing (as `mkdir -p`, inside the workspace only). */
export async function makeFolders(workspace: Workspace, folderPath: string): Promise<void> {
  const names = parse(folderPath, 'path');
  for (let i = 1; i <= names.length; i++) {
    try {
      await makeFolder(workspace, names.slice(0, i).join('/'));
    } catch (error) {
      if (!(error instanceof AppError && error.key === 'files.exists')) throw error;
      const st = await statEntry(workspace, names.slice(0, i).join('/'));
      if (st.type !== 'folder') throw pathRefused('notFolder');
    }
  }
}

/**
 * ensureJobFolder makes a job's working folder (`jobs/<id>`) and returns its absolute path. It lies on
 * every hand-over's way to the scheduler, so the usual case is one makeFolder (jobs/ is there); only when
 * jobs/ is missing, or a retried hand-over finds the folder made, does makeFolders walk the whole path.
 */
export async function ensureJobFolder(workspace: Workspace, jobId: string): Promise<string> {
  const folderPath = jobFolderPath(jobId);
  try {
    await makeFolder(workspace, folderPath);
  } catch (error) {
    if (!(error instanceof AppError && (error.key === 'files.notFound' || error.key === 'files.exists'))) throw error;
    await makeFolders(workspace, folderPath);
  }
  return jobDirOf(workspace, jobId);
}

/** moveEntry renames or moves a file or folder inside the workspace; an existing target is refused. */
export async function moveEntry(workspace: Workspace, fromPath: string, toPath: string): Promise<void> {
  const from = parse(fromPath, 'from');
  const to = parse(toPath, 'to');
  if (isInside(from, to)) throw pathRefused('intoItself', 'to');
  await withParent(workspace, from, 'from', (source, fromLeaf) =>
    withParent(workspace, to, 'to', async (target, toLeaf) => {
      try {
        await lstat(source.at(fromLeaf));
      } catch (error) {
        if (errno(error) === 'ENOENT') throw pathRefused('notFound', 'from');
        throw error;
      }
      try {
        await lstat(target.at(toLeaf));
        throw pathRefused('exists', 'to');
      } catch (error) {
        if (errno(error) !== 'ENOENT') throw error;
      }
      await rename(source.at(fromLeaf), target.at(toLeaf));
    }),
  );
}

/**
 * removeEntry deletes a file, a link (the link, not what it points at) or a folder with everything in it
 * (rm walks with lstat: links inside are removed, not followed). Returns the bytes of files it removed.
 */
export async function removeEntry(workspace: Workspace, entryPath: string): Promise<{ bytes: number }> {
  const names = parse(entryPath, 'path');
  return withParent(workspace, names, 'path', async (folder, leaf) => {
    const target = folder.at(leaf);
    let st;
    try {
      st = await lstat(target);
    } catch (error) {
      if (errno(error) === 'ENOENT') throw pathRefused('notFound');
      throw error;
    }
    const bytes = st.isDirectory() ? await folderBytes(target) : st.isFile() ? st.size : 0;
    await rm(target, { recursive: true, force: true });
    return { bytes };
  });
}

/**
 * folderBytes sums the sizes of the regular files under a folder, following no link (as `du` counts
 * apparent sizes); the storage scan and deletions use it.
 */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length) {
    const current = stack.pop()!;
    let dirents: Dirent[];
    try {
      dirents = await readdir(current, { withFileTypes: true });
    } catch {
      continue; // gone, or not readable: counted by the next scan
    }
    for (const d of dirents) {
      const full = `${current}/${d.name}`;
      if (d.isDirectory()) stack.push(full);
      else if (d.isFile()) {
        try {
          total += (await lstat(full)).size;
        } catch {
          // gone meanwhile
        }
      }
    }
  }
  return total;
}

/**
 * checkUploadTarget refuses an upload to a path that cannot take it: a bad path, a name already there,
 * or a file where a folder on the way should be (missing folders are made when the upload lands).
 */
export async function checkUploadTarget(workspace: Workspace, targetPath: string): Promise<void> {
  const names = parse(targetPath, 'path');
  for (let i = 1; i <= names.length; i++) {
    let entry: Entry;
    try {
      entry = await statEntry(workspace, names.slice(0, i).join('/'));
    } catch (error) {
      if (error instanceof AppError && error.key === 'files.notFound') return;
      throw error;
    }
    if (i === names.length) throw pathRefused('exists');
    if (entry.type !== 'folder') throw pathRefused(entry.type === 'link' ? 'link' : 'notFolder');
  }
}

/** checkNewName checks a single name (a rename in place, a new folder's name). */
export function checkNewName(name: string, field = 'name'): void {
  const problem = checkName(name);
  if (problem) throw pathRefused(problem, field);
}
