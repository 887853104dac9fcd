// Who a job runs as on the cluster: a person's POSIX user and their project's POSIX group. A centre's
// directory (LDAP, FreeIPA) holds both in production; the portal names them the same way on both backends
// so that pages, sacct and the file system agree.

/** A POSIX user or group name as useradd/groupadd (and Slurm) take it portably: lower case, ≤ 32 characters. */
export const POSIX_NAME_RE = /^[a-z_][a-z0-9_-]{0,31}$/;

/** isPosixName tells whether a name is a portable POSIX user or group name. */
export function isPosixName(name: string): boolean {
  return POSIX_NAME_RE.test(name);
}

/**
 * projectGroupName is the POSIX group of a project: `p` and the first 16 hex digits of its id — stable,
 * unique among the centre's projects in practice (2⁶⁴), and free of the project's changing title.
 */
export function projectGroupName(projectId: string): string {
  const hex = projectId.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{16,}$/.test(hex)) throw new Error(`projectGroupName: not a project id: ${JSON.stringify(projectId)}`);
  return `p${hex.slice(0, 16)}`;
}

/**
 * posixNameCandidates gives the user names the portal tries, in order, for a person without one from the
 * directory: the mail address's local part made portable (`Anna.Müller+gpu@…` → `anna.muller` →
 * `anna_muller`), then the same with 2, 3, … appended when taken. A local part with nothing usable gives
 * `u` and the digits.
 */
export function* posixNameCandidates(email: string): Generator<string> {
  const local = (email.split('@')[0] ?? '').split('+')[0] ?? '';
  let base = local
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/^[^a-z_]+/, '')
    .replace(/_+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (base === '') base = 'u';
  base = base.slice(0, 28);
  yield base;
  for (let n = 2; ; n++) yield `${base}${n}`;
}
