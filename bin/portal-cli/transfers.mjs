// What lets a transfer killed halfway go on where it stopped, kept beside config.json in the CLI's
// config folder (mode 0600, written whole and renamed into place):
//   uploads.json   the tus upload URL of each unfinished `files put`, keyed by a fingerprint of what is
//                  sent where (portal, project, site, remote path, local path, size, mtime): the same
//                  command run again asks the portal for the upload's offset and sends only the rest;
//                  a changed local file has another fingerprint, so it starts over.
//   downloads.json the ETag of each unfinished `files get` (its bytes are in `<local>.part`), so the next
//                  run asks for the rest with Range and If-Range: a file changed on the portal since
//                  comes whole again instead of being spliced.
// Entries are dropped once their transfer finishes, and after 7 days (the portal forgets an unfinished
// upload then too).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs';
import path from 'node:path';
import { bytes } from './format.mjs';

/** How long an unfinished transfer is remembered (the portal's UPLOAD_EXPIRY_MS). */
export const TRANSFER_MEMORY_MS = 7 * 24 * 3600 * 1000;

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/**
 * uploadFingerprint names one upload of one local file to one place: the same file (same size and
 * modification time) to the same path of the same project, site and portal. The local path is made
 * absolute, so running from another folder finds it too.
 */
export function uploadFingerprint({ base, projectId, site, remotePath, localPath, size, mtimeMs }) {
  return `portal-cli-upload-${sha256(JSON.stringify([base, projectId, site, remotePath, path.resolve(localPath), size, Math.trunc(mtimeMs)]))}`;
}

/** downloadKey names one download of one remote path to one local file. */
export function downloadKey({ base, projectId, site, remotePath, localPath }) {
  return `portal-cli-download-${sha256(JSON.stringify([base, projectId, site, remotePath, path.resolve(localPath)]))}`;
}

/**
 * A JSON object in a file, read and written whole: `update(fn)` reads it, lets `fn` change it, drops
 * what is older than TRANSFER_MEMORY_MS (each value's `storedAt`), and writes it to a temporary name
 * renamed into place (0600, the folder 0700), so a crash never leaves half a file. A file that is not
 * JSON, or cannot be read, is read as empty (it only ever holds what can be started again).
 */
export class JsonFile {
  /**
   * `warn` hears once that the file cannot be written (a read-only home): the transfer goes on, it just cannot be resumed.
   * @param {string} file
   * @param {() => Date} [now]
   * @param {(message: string) => void} [warn]
   */
  constructor(file, now = () => new Date(), warn = () => {}) {
    this.file = file;
    this.now = now;
    this.warn = warn;
    this.warned = false;
  }

  read() {
    let text;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return {}; // none yet, or unreadable: nothing to resume
    }
    try {
      const data = JSON.parse(text);
      return data && typeof data === 'object' && !Array.isArray(data) ? data : {};
    } catch {
      return {};
    }
  }

  update(change) {
    const data = this.read();
    const result = change(data);
    const oldest = this.now().getTime() - TRANSFER_MEMORY_MS;
    for (const [key, value] of Object.entries(data)) if (!(typeof value?.storedAt === 'number' && value.storedAt >= oldest)) delete data[key];
    const temporary = `${this.file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      fs.writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
      fs.renameSync(temporary, this.file);
    } catch (error) {
      try {
        fs.rmSync(temporary, { force: true });
      } catch {
        // never made
      }
      if (!this.warned) this.warn(`warning: cannot write ${this.file} (${error.code ?? error.message}): this transfer cannot be resumed if it is interrupted`);
      this.warned = true;
    }
    return result;
  }
}

/**
 * UploadUrlStorage is tus-js-client's `urlStorage` (findAllUploads, findUploadsByFingerprint,
 * addUpload, removeUpload) over a JsonFile. Keys are `tus::<fingerprint>::<n>`, as tus-js-client's own.
 */
export class UploadUrlStorage {
  /**
   * @param {string} file
   * @param {() => Date} [now]
   * @param {(message: string) => void} [warn]
   */
  constructor(file, now = () => new Date(), warn = () => {}) {
    this.json = new JsonFile(file, now, warn);
    this.now = now;
  }

  #find(prefix) {
    return Object.entries(this.json.read())
      .filter(([key]) => key.startsWith(prefix))
      .sort(([, a], [, b]) => (b.storedAt ?? 0) - (a.storedAt ?? 0))
      .map(([key, value]) => ({ ...value, urlStorageKey: key }));
  }

  findAllUploads() {
    return Promise.resolve(this.#find('tus::'));
  }

  findUploadsByFingerprint(fingerprint) {
    return Promise.resolve(this.#find(`tus::${fingerprint}::`));
  }

  addUpload(fingerprint, upload) {
    const key = `tus::${fingerprint}::${this.now().getTime().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    this.json.update((data) => {
      // One upload per fingerprint: a new one replaces what an earlier run left.
      for (const old of Object.keys(data)) if (old.startsWith(`tus::${fingerprint}::`)) delete data[old];
      const { urlStorageKey: _ignored, ...value } = upload;
      data[key] = { ...value, storedAt: this.now().getTime() };
    });
    return Promise.resolve(key);
  }

  removeUpload(urlStorageKey) {
    this.json.update((data) => {
      delete data[urlStorageKey];
    });
    return Promise.resolve();
  }
}

/** DownloadRecords remembers the ETag (and size) of each unfinished download, by downloadKey. */
export class DownloadRecords {
  /**
   * @param {string} file
   * @param {() => Date} [now]
   * @param {(message: string) => void} [warn]
   */
  constructor(file, now = () => new Date(), warn = () => {}) {
    this.json = new JsonFile(file, now, warn);
    this.now = now;
  }

  get(key) {
    const value = this.json.read()[key];
    return value && typeof value.etag === 'string' ? value : null;
  }

  set(key, { etag, size }) {
    this.json.update((data) => {
      data[key] = { etag, size, storedAt: this.now().getTime() };
    });
  }

  remove(key) {
    if (this.json.read()[key] === undefined) return;
    this.json.update((data) => {
      delete data[key];
    });
  }
}

/** sha256OfFile hashes a local file by streaming it. */
export async function sha256OfFile(file) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * progressMeter shows a transfer on stderr when it is a terminal: "  42%  8.40 MB of 20.0 MB  12.3 MB/s"
 * (without a total: the bytes and the speed), redrawn at most five times a second on one line. The
 * speed counts this run's bytes only (not those a resumed transfer already had). Off the terminal it
 * says nothing.
 * @param {{ stderrIsTTY?: boolean, stderr: { write(text: string): unknown }, now(): Date }} io
 * @param {{ total?: number | null, startAt?: number }} [options]
 */
export function progressMeter(io, { total = null, startAt = 0 } = {}) {
  const shown = Boolean(io.stderrIsTTY);
  const clock = () => io.now().getTime();
  const began = clock();
  let last = 0;
  let done = startAt;
  let width = 0;
  const draw = (final) => {
    const seconds = Math.max(0.001, (clock() - began) / 1000);
    const speed = `${bytes(Math.round((done - startAt) / seconds))}/s`;
    const text = total !== null ? `  ${total > 0 ? Math.floor((done / total) * 100) : 100}%  ${bytes(done)} of ${bytes(total)}  ${speed}` : `  ${bytes(done)}  ${speed}`;
    io.stderr.write(`\r${text.padEnd(width)}${final ? '\n' : ''}`);
    width = text.length;
  };
  return {
    /** update sets how many bytes are done in all (resumed ones included). */
    update(value) {
      done = value;
      if (!shown) return;
      const at = clock();
      if (at - last < 200) return;
      last = at;
      draw(false);
    },
    /** finish draws the last state and ends the line (when anything was drawn). */
    finish() {
      if (shown) draw(true);
    },
  };
}
