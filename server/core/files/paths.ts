// What a path in a project's workspace may be. Pure rules: the filesystem side (opening without following
// links, checking the real path) is server/services/files/workspace.ts.
//
// A path is relative to the workspace, `/`-separated, as the files page and the API name it: `data/train.jsonl`.
// Refused, each with its own reason: an absolute path, `..` or `.`, an empty segment (`a//b`), control
// characters and NUL, a backslash or a percent-encoded separator, dot or NUL (`..%2f`, a second decoding must
// not turn a name into a way out), a name longer than 255 bytes, a path longer than 4096 bytes or deeper
// than 64 folders. The workspace itself is the empty path.

export const MAX_NAME_BYTES = 255;
export const MAX_PATH_BYTES = 4096;
export const MAX_DEPTH = 64;

export type PathProblem = 'absolute' | 'dots' | 'empty' | 'control' | 'separator' | 'nameTooLong' | 'tooLong' | 'tooDeep' | 'root' | 'reserved';

/**
 * The folder an interactive session's launcher keeps its connection file in (its app's address and
 * secret, issue #28), inside the job's folder. No path through the files API may name it and no listing
 * or archive shows it, wherever the job's folder is moved: the secret never reaches a browser.
 */
export const SESSION_FOLDER = '.portal-session';

/** The file in it where a job's app or model server says where it listens and with which secret. */
export const CONNECTION_FILE = 'connection.json';

/** connectionFileIn is a job's connection file, given the job's folder: `<job folder>/.portal-session/connection.json`. */
export function connectionFileIn(jobDir: string): string {
  return `${jobDir.replace(/\/+$/, '')}/${SESSION_FOLDER}/${CONNECTION_FILE}`;
}

export type PathCheck = { ok: true; segments: string[] } | { ok: false; problem: PathProblem };

const encoder = new TextEncoder();
// %2f %5c (separators), %00 (NUL), %2e (a dot: `%2e%2e` is `..` decoded once more).
const ENCODED_DANGER = /%(2f|5c|00|2e)/i;
// C0 controls, DEL and the C1 controls: never part of a name a person typed.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** checkName tells whether one folder or file name is allowed. */
export function checkName(name: string): PathProblem | null {
  if (name === '') return 'empty';
  if (name === '.' || name === '..') return 'dots';
  if (name === SESSION_FOLDER) return 'reserved';
  if (CONTROL.test(name)) return 'control';
  if (name.includes('/') || name.includes('\\') || ENCODED_DANGER.test(name)) return 'separator';
  if (encoder.encode(name).length > MAX_NAME_BYTES) return 'nameTooLong';
  return null;
}

/**
 * checkPath splits a workspace path into its names, or says why it is refused. A trailing `/` is allowed
 * (a folder). `allowRoot`: the empty path (the workspace itself) is allowed, as for a listing.
 */
export function checkPath(input: string, options: { allowRoot?: boolean } = {}): PathCheck {
  if (input.startsWith('/')) return { ok: false, problem: 'absolute' };
  if (encoder.encode(input).length > MAX_PATH_BYTES) return { ok: false, problem: 'tooLong' };
  const trimmed = input.endsWith('/') ? input.slice(0, -1) : input;
  if (trimmed === '') return options.allowRoot ? { ok: true, segments: [] } : { ok: false, problem: 'root' };
  const segments = trimmed.split('/');
  if (segments.length > MAX_DEPTH) return { ok: false, problem: 'tooDeep' };
  for (const segment of segments) {
    const problem = checkName(segment);
    if (problem) return { ok: false, problem };
  }
  return { ok: true, segments };
}

/** joinPath is the workspace path of names (the inverse of checkPath). */
export function joinPath(segments: readonly string[]): string {
  return segments.join('/');
}

/** isInside tells whether `inner` is `outer` or below it, by names (`a/b` is inside `a`, `ab` is not). */
export function isInside(outer: readonly string[], inner: readonly string[]): boolean {
  return outer.length <= inner.length && outer.every((name, i) => inner[i] === name);
}
