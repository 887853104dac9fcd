// `files …`: a project's workspace at a site, over /api/v1 — list, download (a file resumable with
// Range + If-Range, a folder as a tar), upload (tus, resumable across runs), make folders, move, delete.
// What lets a transfer go on after the CLI was killed is in transfers.mjs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { clearTimeout, setTimeout } from 'node:timers';
import { pipeline } from 'node:stream/promises';
import { ApiError, NetworkError } from './api.mjs';
import { configPath } from './config.mjs';
import { EXIT, UsageError } from './exit-codes.mjs';
import * as f from './format.mjs';
import { DownloadRecords, UploadUrlStorage, downloadKey, progressMeter, sha256OfFile, uploadFingerprint } from './transfers.mjs';

const writeJson = (io, value) => io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** A download stalled this long (no byte) is broken off and asked again from where it stopped. */
const STALL_MS = 60_000;
/** How often a broken download is asked again (from where it stopped) before giving up. */
const DOWNLOAD_ATTEMPTS = 5;
/** The bytes one PATCH of an upload carries: each one the portal has stored survives a crash of the CLI, whatever a proxy in between buffers. */
const UPLOAD_CHUNK_BYTES = 64 * 1024 * 1024;

/** BrokenTransferError: the answer started, then its body broke off or stalled. Exit 6, like any network failure; run again to resume. */
export class BrokenTransferError extends NetworkError {
  constructor(url, cause) {
    super(url, cause);
    this.message = `the transfer from ${url} broke off: ${cause?.cause?.code ?? cause?.code ?? cause?.message ?? String(cause)}`;
  }
}

/** ChecksumError: the portal's SHA-256 of an upload is not the local file's. Exit 1. */
export class ChecksumError extends Error {
  name = 'ChecksumError';
}

/** workspacePath tidies a path as typed (./data/, data//x stays for the portal to refuse) into the API's form: '' is the workspace. */
export function workspacePath(typed) {
  let p = String(typed ?? '').replace(/^(\.\/)+/, '');
  if (p === '.' || p === './') p = '';
  return p.replace(/(?<=.)\/+$/, '');
}

const joinRemote = (folder, name) => (folder ? `${folder}/${name}` : name);
const shown = (site, p) => `${site}:${p || '/'}`;

/**
 * siteOf is the site a files command works at: --site, else the project's only workspace, else the
 * first the portal lists (said on stderr, with the others).
 */
async function siteOf(api, project, { io, options }) {
  if (options.site) return options.site;
  const sites = await api.request('GET', `/projects/${project}/workspaces`);
  if (sites.length === 0) throw new ApiError(404, { code: 'NOT_FOUND', message: 'the project has no workspace at any site (its data-residency rule allows none)' });
  if (sites.length > 1 && !options.json)
    io.stderr.write(`Site ${sites[0].id} (${sites[0].name}); the project also has a workspace at ${sites
      .slice(1)
      .map((s) => s.id)
      .join(', ')}: choose with --site.\n`);
  return sites[0].id;
}

const stat = (api, project, site, p) => api.request('GET', `/projects/${project}/files/stat`, { query: { site, path: p } });

// ---- ls, mkdir, mv, rm --------------------------------------------------------------------------

export async function filesLs({ io, options, client, args }) {
  const api = client();
  const site = await siteOf(api, args.project, { io, options });
  const folder = workspacePath(args.path);
  let entries = [];
  let total;
  let single = false;
  try {
    let cursor;
    do {
      const page = await api.request('GET', `/projects/${args.project}/files`, { query: { site, path: folder, cursor, limit: 1000 } });
      entries.push(...page.entries);
      total = page.total;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  } catch (error) {
    // A file is shown on its own, as `ls file` does.
    if (!(error instanceof ApiError && error.status === 400 && folder)) throw error;
    const entry = await stat(api, args.project, site, folder).catch(() => null);
    if (!entry || entry.type === 'folder') throw error;
    entries = [entry];
    total = 1;
    single = true;
  }
  if (options.json) {
    writeJson(io, { site, path: folder, entries, total });
    return EXIT.OK;
  }
  if (entries.length === 0) {
    io.stdout.write(folder ? `${shown(site, folder)} is empty.\n` : `The workspace at ${site} is empty.\n`);
    return EXIT.OK;
  }
  io.stdout.write(
    f.table(
      ['NAME', 'TYPE', { header: 'SIZE', right: true }, 'MODIFIED (UTC)'],
      entries.map((e) => [single ? folder : `${e.name}${e.type === 'folder' ? '/' : ''}`, e.type, e.type === 'file' ? f.bytes(e.size) : '', f.dateTime(e.modifiedAt, { short: true })]),
    ),
  );
  return EXIT.OK;
}

export async function filesMkdir({ io, options, client, args }) {
  const api = client();
  const site = await siteOf(api, args.project, { io, options });
  const folder = workspacePath(args.path);
  await api.request('POST', `/projects/${args.project}/files/folders`, { body: { site, path: folder } });
  if (options.json) writeJson(io, { site, path: folder });
  else io.stdout.write(`Made the folder ${shown(site, folder)}.\n`);
  return EXIT.OK;
}

export async function filesMv({ io, options, client, args }) {
  const api = client();
  const site = await siteOf(api, args.project, { io, options });
  const from = workspacePath(args.from);
  const to = workspacePath(args.to);
  await api.request('POST', `/projects/${args.project}/files/move`, { body: { site, from, to } });
  if (options.json) writeJson(io, { site, from, to });
  else io.stdout.write(`Moved ${shown(site, from)} to ${to}.\n`);
  return EXIT.OK;
}

export async function filesRm({ io, options, client, args }) {
  const api = client();
  const site = await siteOf(api, args.project, { io, options });
  const target = workspacePath(args.path);
  if (!target) throw new UsageError('files rm deletes a file or folder in the workspace, not the workspace itself');
  const entry = await stat(api, args.project, site, target);
  if (entry.type === 'folder' && !options.recursive) throw new UsageError(`${shown(site, target)} is a folder: pass --recursive to delete it with everything in it`);
  let answer;
  try {
    // DELETE takes its input as query parameters (trpc-to-openapi), not a body.
    answer = await api.request('DELETE', `/projects/${args.project}/files`, { query: { site, path: target } });
  } catch (error) {
    // There a moment ago, gone now: a retry after a lost answer, or someone else was quicker. Either way it is gone.
    if (!(error instanceof ApiError && error.status === 404 && error.fields?.path)) throw error;
    answer = { bytes: null };
  }
  if (options.json) writeJson(io, { site, path: target, type: entry.type, bytes: answer.bytes });
  else io.stdout.write(`Deleted ${shown(site, target)}${answer.bytes !== null ? ` (${f.bytes(answer.bytes)})` : ''}.\n`);
  return EXIT.OK;
}

// ---- get ----------------------------------------------------------------------------------------

/** isDirectory: an existing folder on this machine (following links, as cp does). */
function isDirectory(p) {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function sizeOf(file) {
  try {
    return fs.statSync(file).size;
  } catch (error) {
    if (error.code === 'ENOENT') return 0;
    throw error;
  }
}

/** A sink's view of the bytes passing: progress, a stall timer, and a body error named as a broken transfer. */
function counted(body, { url, onBytes, abort }) {
  let timer;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort(new Error(`no data for ${STALL_MS / 1000} s`)), STALL_MS);
  };
  async function* chunks() {
    arm();
    try {
      for await (const chunk of body) {
        arm();
        onBytes(chunk.length);
        yield chunk;
      }
    } catch (cause) {
      throw new BrokenTransferError(url, cause);
    } finally {
      clearTimeout(timer);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

/** stdoutSink writes to the io's stdout, waiting for it to drain. */
function stdoutSink(io) {
  return new Writable({
    write(chunk, _encoding, done) {
      const ok = io.stdout.write(chunk);
      if (ok === false && typeof io.stdout.once === 'function') io.stdout.once('drain', () => done());
      else done();
    },
  });
}

const transient = (error) => error instanceof NetworkError || (error instanceof ApiError && error.status >= 500);

/**
 * downloadFile streams a file to `local` (through `local.part`, renamed when whole) or to stdout. A
 * partial `.part` left by an earlier run, with the ETag that run saw, is continued with Range and
 * If-Range: a 206 appends, a 200 (the file changed on the portal) starts over. A body that breaks off
 * or stalls is asked again from where it stopped, a few times, within the same run.
 */
async function downloadFile({ io, api, project, site, remote, entry, local, key, records, options }) {
  const toStdout = local === '-';
  const part = `${local}.part`;
  const url = `/projects/${project}/files/content`;
  let written = 0; // to stdout
  let etagSeen = null; // to stdout: the first answer's
  let resumedAt = null;
  let total;
  let meter = null;
  let sent = 0;
  for (let attempt = 1; ; attempt++) {
    const have = toStdout ? written : sizeOf(part);
    const etag = toStdout ? etagSeen : records.get(key)?.etag;
    const resume = have > 0 && etag;
    try {
      if (toStdout && written > 0 && !etag) throw new Error(`the download of ${shown(site, remote)} to stdout broke off after ${f.bytes(written)}, and without an ETag it cannot go on from there: run it again`);
      const { response, abort, url: target } = await api.open('GET', url, { query: { site, path: remote }, headers: resume ? { range: `bytes=${have}-`, 'if-range': etag } : {}, allow: [416] });
      let start = 0;
      if (response.status === 416) {
        // Nothing from `have` on: the part is the whole file if the sizes agree, else start over.
        await response.body?.cancel();
        const whole = /^bytes \*\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
        if (!toStdout && whole && Number(whole[1]) === have) {
          total = have;
          resumedAt = have;
          break;
        }
        if (toStdout) throw new BrokenTransferError(target, new Error('the file changed on the portal while it was read'));
        fs.rmSync(part, { force: true });
        records.remove(key);
        continue;
      }
      if (response.status === 206) {
        const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
        if (!range || Number(range[1]) !== have) {
          await response.body?.cancel();
          throw new BrokenTransferError(target, new Error(`the portal answered another range (${response.headers.get('content-range')}) than asked`));
        }
        start = have;
        total = Number(range[3]);
        if (attempt === 1 && !toStdout) resumedAt = have;
      } else {
        // 200: the whole file, from the start (the first time, or it changed since the partial copy).
        if (resume && toStdout) {
          await response.body?.cancel();
          throw new BrokenTransferError(target, new Error('the file changed on the portal while it was read'));
        }
        if (resume && !options.json) io.stderr.write(`${shown(site, remote)} changed on the portal since the partial download: starting over.\n`);
        total = Number(response.headers.get('content-length') ?? entry.size);
        const tag = response.headers.get('etag');
        if (toStdout) etagSeen = tag;
        else if (tag && !tag.startsWith('W/')) records.set(key, { etag: tag, size: total });
        else records.remove(key);
      }
      if (resumedAt !== null && attempt === 1 && !options.json) io.stderr.write(`Resuming ${path.basename(local)} at ${f.bytes(resumedAt)} of ${f.bytes(total)}.\n`);
      meter ??= progressMeter(io, { total, startAt: start });
      let done = start;
      const source = counted(response.body, {
        url: target,
        abort,
        onBytes: (n) => {
          done += n;
          sent += n;
          if (toStdout) written += n;
          meter.update(done);
        },
      });
      await pipeline(source, toStdout ? stdoutSink(io) : fs.createWriteStream(part, { flags: start > 0 ? 'a' : 'w' }));
      if (!toStdout && sizeOf(part) !== total) throw new BrokenTransferError(target, new Error(`${sizeOf(part)} of ${total} bytes arrived`));
      break;
    } catch (error) {
      if (!transient(error) || attempt >= DOWNLOAD_ATTEMPTS) {
        meter?.finish();
        if (!toStdout && transient(error) && !options.json) io.stderr.write(`${path.basename(part)} keeps the ${f.bytes(sizeOf(part))} that arrived: run the same command again to go on from there.\n`);
        throw error;
      }
      if (!options.json) io.stderr.write(`${meter && io.stderrIsTTY ? '\n' : ''}warning: ${error.message}; going on from where it stopped\n`);
      await io.sleep(1000 * 2 ** (attempt - 1));
    }
  }
  meter?.finish();
  if (!toStdout) {
    fs.renameSync(part, local);
    records.remove(key);
  }
  return { bytes: total, sent, resumedAt };
}

/** downloadFolder streams a folder's tar to a file (through .part), to stdout, or into `tar -x`. */
async function downloadFolder({ io, api, project, site, remote, local, extractInto }) {
  const { response, abort, url: target } = await api.open('GET', `/projects/${project}/files/content`, { query: { site, path: remote } });
  const meter = progressMeter(io, {});
  let done = 0;
  const source = counted(response.body, {
    url: target,
    abort,
    onBytes: (n) => {
      done += n;
      meter.update(done);
    },
  });
  try {
    if (extractInto !== undefined) {
      fs.mkdirSync(extractInto, { recursive: true });
      const tar = spawn('tar', ['-x', '-f', '-', '-C', extractInto], { stdio: ['pipe', 'ignore', 'pipe'] });
      let complaint = '';
      tar.stderr.on('data', (chunk) => (complaint += chunk));
      const exited = new Promise((resolve, reject) => {
        tar.on('error', reject);
        tar.on('close', (code) => resolve(code));
      });
      let streamError = null;
      await pipeline(source, tar.stdin).catch((error) => (streamError = error));
      const code = await exited.catch((error) => {
        throw new Error(`cannot run tar: ${error.message}`);
      });
      if (code !== 0) throw new Error(`tar -x failed (exit ${code}): ${complaint.trim() || streamError?.message || 'no message'}`);
      if (streamError) throw streamError;
    } else if (local === '-') {
      await pipeline(source, stdoutSink(io));
    } else {
      const part = `${local}.part`;
      await pipeline(source, fs.createWriteStream(part));
      fs.renameSync(part, local);
    }
  } finally {
    meter.finish();
  }
  return { bytes: done };
}

export async function filesGet({ io, options, client, args, warn }) {
  const api = client();
  const site = await siteOf(api, args.project, { io, options });
  const remote = workspacePath(args.remote);
  const entry = await stat(api, args.project, site, remote);
  const name = remote.split('/').pop() || `workspace-${site}`;

  if (entry.type === 'folder') {
    if (options.extract) {
      if (args.local === '-') throw new UsageError('--extract unpacks into a folder: name one (or leave LOCAL out for this one), not -');
      const into = args.local ?? '.';
      const result = await downloadFolder({ io, api, project: args.project, site, remote, extractInto: into });
      if (options.json) writeJson(io, { site, path: remote, type: 'folder', extractedInto: path.resolve(into), bytes: result.bytes });
      else io.stderr.write(`Unpacked ${shown(site, remote)} into ${path.join(into, name)}${path.sep} (${f.bytes(result.bytes)} of tar).\n`);
      return EXIT.OK;
    }
    let local = args.local ?? `${name}.tar`;
    if (local !== '-' && (local.endsWith('/') || isDirectory(local))) local = path.join(local, `${name}.tar`);
    const result = await downloadFolder({ io, api, project: args.project, site, remote, local });
    if (options.json && local !== '-') writeJson(io, { site, path: remote, type: 'folder', local: path.resolve(local), bytes: result.bytes });
    else if (!options.json) io.stderr.write(`Saved ${shown(site, remote)} as a tar${local === '-' ? ' to stdout' : ` in ${local}`} (${f.bytes(result.bytes)}).\n`);
    return EXIT.OK;
  }
  if (entry.type !== 'file') throw new ApiError(400, { code: 'BAD_REQUEST', message: `${shown(site, remote)} is a ${entry.type === 'link' ? 'symbolic link, which the portal does not follow' : 'special file'}: nothing to download` });
  if (options.extract) throw new UsageError(`--extract unpacks a folder, and ${shown(site, remote)} is a file`);

  let local = args.local ?? name;
  if (local !== '-' && (local.endsWith('/') || isDirectory(local))) local = path.join(local, name);
  const records = new DownloadRecords(path.join(path.dirname(configPath(io.env, io.homedir)), 'downloads.json'), io.now, warn);
  const key = downloadKey({ base: api.base, projectId: args.project, site, remotePath: remote, localPath: local });
  const result = await downloadFile({ io, api, project: args.project, site, remote, entry, local, key, records, options });
  if (options.json && local !== '-') writeJson(io, { site, path: remote, type: 'file', local: path.resolve(local), bytes: result.bytes, resumedAt: result.resumedAt });
  else if (!options.json && local !== '-')
    io.stderr.write(`Downloaded ${shown(site, remote)} to ${local} (${f.bytes(result.bytes)}${result.resumedAt ? `; ${f.bytes(result.resumedAt)} of it from an earlier run` : ''}).\n`);
  return EXIT.OK;
}

// ---- put ----------------------------------------------------------------------------------------

/** tusError turns tus-js-client's failure into the CLI's errors (so the exit codes hold): the portal's answer, or no answer. */
export function tusError(error, endpoint) {
  const response = error?.originalResponse;
  if (response) {
    const status = response.getStatus();
    const text = String(response.getBody() ?? '').trim();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      // tus answers plain text ("path: A file or folder of that name is already there…")
    }
    const shape = body?.error ?? { code: `HTTP_${status}`, message: text || `the portal answered HTTP ${status}` };
    return new ApiError(status, shape, error.originalRequest?.getURL?.() ?? endpoint);
  }
  const cause = error?.causingError ?? error;
  if (cause && (cause.code || cause.cause?.code || /ECONN|socket|network/i.test(cause.message ?? ''))) return new NetworkError(error?.originalRequest?.getURL?.() ?? endpoint, cause);
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * shouldRetryUpload: no answer, a 5xx, a 429, or tus's "offset moved" and "locked" (409, 423 on a PATCH
 * or HEAD) are tried again; a refusal is not. tus-js-client's own rule retries every 409, but the portal
 * answers the creation (POST) with 409 when the name is taken, which no retry changes.
 */
export function shouldRetryUpload(error) {
  const status = error?.originalResponse?.getStatus?.() ?? 0;
  if (status === 0 || status >= 500 || status === 429) return true;
  if (status === 409 || status === 423) return error?.originalRequest?.getMethod?.() !== 'POST';
  return false;
}

export async function filesPut({ io, options, client, args, warn }) {
  const local = args.local;
  let st;
  try {
    st = fs.statSync(local);
  } catch (error) {
    throw new UsageError(`cannot read ${local}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  }
  if (st.isDirectory()) throw new UsageError(`${local} is a folder: upload its files one by one, or pack it first (tar -cf ${path.basename(local)}.tar ${local})`);
  if (!st.isFile()) throw new UsageError(`${local} is not a regular file`);
  const api = client();
  const site = await siteOf(api, args.project, { io, options });

  // Where it goes: REMOTE as given; into it when it ends with / or is an existing folder, as cp does.
  const name = path.basename(local);
  let remote = args.remote === undefined ? name : workspacePath(args.remote);
  if (args.remote !== undefined && (remote === '' || /\/$/.test(args.remote))) remote = joinRemote(remote, name);
  else if (args.remote !== undefined) {
    const there = await stat(api, args.project, site, remote).catch(() => null);
    if (there?.type === 'folder') remote = joinRemote(remote, name);
  }

  const { Upload } = await import('tus-js-client');
  const endpoint = `${api.base}/uploads`;
  const storage = new UploadUrlStorage(path.join(path.dirname(configPath(io.env, io.homedir)), 'uploads.json'), io.now, warn);
  const fingerprint = uploadFingerprint({ base: api.base, projectId: args.project, site, remotePath: remote, localPath: local, size: st.size, mtimeMs: st.mtimeMs });
  // The local file's hash is taken while it uploads (the portal hashes what it received).
  const localHash = sha256OfFile(local);
  localHash.catch(() => undefined);

  let resumedAt = null;
  let meter = null;
  const lastResponse = await new Promise((resolve, reject) => {
    const upload = new Upload(fs.createReadStream(local), {
      endpoint,
      metadata: { projectId: args.project, site, path: remote, filename: name },
      // An empty file is created with its length deferred, then declared by one empty PATCH: the portal
      // answers a POST that finishes an upload at once (length 0) with 404 after placing it.
      ...(st.size === 0 ? { uploadLengthDeferred: true } : { uploadSize: st.size }),
      chunkSize: UPLOAD_CHUNK_BYTES,
      headers: api.headers(),
      urlStorage: storage,
      fingerprint: () => Promise.resolve(fingerprint),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      retryDelays: [0, 1000, 3000, 5000, 10_000, 20_000],
      onShouldRetry: shouldRetryUpload,
      onAfterResponse: (request, response) => {
        if (request.getMethod() === 'HEAD' && response.getStatus() === 200 && resumedAt === null) resumedAt = Number(response.getHeader('Upload-Offset')) || 0;
      },
      onProgress: (sent, total) => {
        meter ??= progressMeter(io, { total, startAt: sent });
        meter.update(sent);
      },
      onSuccess: ({ lastResponse: answer }) => resolve(answer),
      onError: (error) => reject(tusError(error, endpoint)),
    });
    upload
      .findPreviousUploads()
      .then((previous) => {
        if (previous.length > 0) upload.resumeFromPreviousUpload(previous[0]);
        upload.start();
      })
      .catch((error) => reject(tusError(error, endpoint)));
  }).finally(() => meter?.finish());

  const sha256 = lastResponse.getHeader('Upload-Sha256');
  const placedHeader = lastResponse.getHeader('Upload-Path');
  if (!sha256 || !placedHeader) {
    // The portal had every byte already (an earlier run was killed after its last byte) but never said where it put them.
    throw new Error(`the portal has every byte of ${name} but did not confirm where it placed them: see \`portal-cli files ls ${args.project} --site ${site}\`, and if ${remote} is missing, run the command again`);
  }
  const placed = decodeURIComponent(placedHeader);
  const mine = await localHash;
  if (mine !== sha256) throw new ChecksumError(`the portal’s SHA-256 of ${shown(site, placed)} is ${sha256}, the local file’s is ${mine}: ${local} changed while it uploaded, or bytes were damaged on the way. Delete it (portal-cli files rm ${args.project} ${placed} --site ${site}) and upload it again`);

  if (options.json) writeJson(io, { site, path: placed, requestedPath: remote, bytes: st.size, sha256, resumedAt });
  else {
    io.stdout.write(`${sha256}  ${placed}\n`);
    if (placed !== remote) io.stderr.write(`Note: ${remote} was taken while this uploaded, so it is at ${placed}.\n`);
    io.stderr.write(`Uploaded ${local} to ${shown(site, placed)} (${f.bytes(st.size)}${resumedAt ? `; went on at ${f.bytes(resumedAt)} from an earlier run` : ''}); its SHA-256 equals the local file’s.\n`);
  }
  return EXIT.OK;
}
