// A job's working folder is made on every hand-over: in the workspace only, whatever a job left there.
import { mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '~/server/errors';
import { ensureJobFolder, type Workspace } from './workspace';

describe('ensureJobFolder', () => {
  let root: string;
  let workspace: Workspace;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'portal-job-folder-'));
    workspace = { projectId: 'p1', siteId: 's1', dir: path.join(root, 'site', 'proj-p1') };
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('makes the workspace, jobs/ and the job folder (2770), and again finds them', async () => {
    const dir = await ensureJobFolder(workspace, 'job-1');
    expect(dir).toBe(path.join(workspace.dir, 'jobs', 'job-1'));
    expect((await stat(dir)).mode & 0o7777).toBe(0o2770);
    expect((await stat(path.join(workspace.dir, 'jobs'))).mode & 0o7777).toBe(0o2770);
    // A second hand-over of the same job, and a second job beside it.
    expect(await ensureJobFolder(workspace, 'job-1')).toBe(dir);
    expect((await stat(await ensureJobFolder(workspace, 'job-2'))).isDirectory()).toBe(true);
  });

  it('refuses a jobs/ that a job turned into a link, and a file in the job folder\'s place', async () => {
    const elsewhere = path.join(root, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(workspace.dir, { recursive: true });
    await symlink(elsewhere, path.join(workspace.dir, 'jobs'));
    const viaLink = await ensureJobFolder(workspace, 'job-1').catch((e: unknown) => e);
    expect(viaLink).toBeInstanceOf(AppError);
    expect((viaLink as AppError).key).toBe('files.path.link');
    await expect(stat(path.join(elsewhere, 'job-1'))).rejects.toThrow(/ENOENT/);

    await rm(path.join(workspace.dir, 'jobs'));
    await mkdir(path.join(workspace.dir, 'jobs'));
    await writeFile(path.join(workspace.dir, 'jobs', 'job-2'), 'not a folder');
    const overFile = await ensureJobFolder(workspace, 'job-2').catch((e: unknown) => e);
    expect((overFile as AppError).key).toBe('files.path.notFolder');
    await symlink(elsewhere, path.join(workspace.dir, 'jobs', 'job-3'));
    expect(((await ensureJobFolder(workspace, 'job-3').catch((e: unknown) => e)) as AppError).key).toBe('files.path.notFolder');
  });
});
