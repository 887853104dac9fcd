// Unix groups of workspaces: a project's workspace belongs to the group its jobs run in (the project's
// group when jobs run as their people, the service user's group when every job runs as that user), so
// what the portal puts there (uploads, folders) is readable by the project's jobs and nobody else's.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const gids = new Map<string, number | null>();

/** gidOf looks a group up in the system's directory (`getent group`); null when it has no such group. */
export async function gidOf(group: string): Promise<number | null> {
  if (gids.has(group)) return gids.get(group)!;
  const { stdout } = await execFileAsync('getent', ['group', group]).catch(() => ({ stdout: '' }));
  const gid = Number(stdout.split(':')[2]);
  const found = stdout && Number.isInteger(gid) ? gid : null;
  gids.set(group, found);
  return found;
}

const primary = new Map<string, string | null>();

/** primaryGroupOf is a user's primary group's name (`id -gn`), or null when the system has no such user. */
export async function primaryGroupOf(user: string): Promise<string | null> {
  if (primary.has(user)) return primary.get(user)!;
  const { stdout } = await execFileAsync('id', ['-gn', '--', user]).catch(() => ({ stdout: '' }));
  const name = stdout.trim() || null;
  primary.set(user, name);
  return name;
}
