import { describe, expect, it } from 'vitest';
import { helpFor, parseCommandLine } from './args.mjs';
import { UsageError } from './exit-codes.mjs';

const ID = '3f2c0d9e-1111-4aaa-8bbb-000000000001';
const PROJECT = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

describe('parseCommandLine', () => {
  it.each([
    [['jobs', 'list'], { command: 'jobs list', options: {} }],
    [['jobs', 'list', '--state', 'running', '--limit', '20', '--all', '--json'], { command: 'jobs list', options: { state: 'RUNNING', limit: 20, all: true, json: true } }],
    [['--json', 'jobs', 'get', ID.toUpperCase()], { command: 'jobs get', id: ID, options: { json: true } }],
    [['jobs', 'watch', ID, '--interval', '5'], { command: 'jobs watch', id: ID, options: { interval: 5 } }],
    [['jobs', 'submit', '-f', 'job.yaml', '-y'], { command: 'jobs submit', options: { file: 'job.yaml', yes: true } }],
    [['login', '--url', 'https://portal.example', '--token', 'afp_x'], { command: 'login', options: { url: 'https://portal.example', token: 'afp_x' } }],
    [['usage', '--month', '2026-11', '--csv'], { command: 'usage', options: { month: '2026-11', csv: true } }],
    [['usage', '--from', '2026-11-01', '--to', '2026-11-15'], { command: 'usage', options: { from: '2026-11-01', to: '2026-11-15' } }],
    [['allocations', '--url', 'http://localhost:3000'], { command: 'allocations', options: { url: 'http://localhost:3000' } }],
    [['jobs', 'logs', ID], { command: 'jobs logs', id: ID, options: {} }],
    [['jobs', 'logs', ID, '--stderr', '--task', '0', '--follow'], { command: 'jobs logs', id: ID, options: { stderr: true, task: 0, follow: true } }],
    [['files', 'ls', PROJECT], { command: 'files ls', args: { project: PROJECT }, options: {} }],
    [['files', 'ls', PROJECT.toUpperCase(), 'data/raw', '--site', 'de-jena'], { command: 'files ls', args: { project: PROJECT, path: 'data/raw' }, options: { site: 'de-jena' } }],
    [['files', 'get', PROJECT, 'model.bin'], { command: 'files get', args: { project: PROJECT, remote: 'model.bin' }, options: {} }],
    [['files', 'get', PROJECT, 'out', '-'], { command: 'files get', args: { project: PROJECT, remote: 'out', local: '-' }, options: {} }],
    [['files', 'get', PROJECT, 'out', 'here', '-x'], { command: 'files get', args: { project: PROJECT, remote: 'out', local: 'here' }, options: { extract: true } }],
    [['files', 'put', PROJECT, './w.bin'], { command: 'files put', args: { project: PROJECT, local: './w.bin' }, options: {} }],
    [['files', 'put', PROJECT, 'w.bin', 'models/', '--json'], { command: 'files put', args: { project: PROJECT, local: 'w.bin', remote: 'models/' }, options: { json: true } }],
    [['files', 'mkdir', PROJECT, 'data'], { command: 'files mkdir', args: { project: PROJECT, path: 'data' }, options: {} }],
    [['files', 'mv', PROJECT, 'a', 'b'], { command: 'files mv', args: { project: PROJECT, from: 'a', to: 'b' }, options: {} }],
    [['files', 'rm', PROJECT, 'data', '-r'], { command: 'files rm', args: { project: PROJECT, path: 'data' }, options: { recursive: true } }],
    // A path that starts with a dash, after --.
    [['files', 'rm', PROJECT, '--', '-odd'], { command: 'files rm', args: { project: PROJECT, path: '-odd' }, options: {} }],
  ])('%j', (argv, expected) => {
    expect(parseCommandLine(argv)).toEqual(expected);
  });

  it.each([
    [[], undefined],
    [['help'], undefined],
    [['help', 'jobs', 'submit'], 'jobs submit'],
    [['jobs', 'submit', '--help'], 'jobs submit'],
    [['--help'], undefined],
    [['files', '--help'], 'files'],
    [['files', 'put', '--help'], 'files put'],
  ])('%j asks for help', (argv, topic) => {
    expect(parseCommandLine(argv)).toMatchObject({ command: 'help', topic });
  });

  it.each([
    [['frobnicate'], /unknown command "frobnicate"/],
    [['jobs', 'delete', ID], /unknown jobs command "delete"/],
    [['jobs', 'list', '--file', 'x'], /jobs list does not take --file/],
    [['jobs', 'list', '--bogus'], /Unknown option '--bogus'/],
    [['jobs', 'list', '--limit', '0'], /--limit must be a whole number from 1 to 500/],
    [['jobs', 'list', '--limit', 'ten'], /--limit must be a whole number/],
    [['jobs', 'list', '--state', 'DONE'], /--state must be one of SUBMITTING, PENDING/],
    [['jobs', 'get'], /usage: portal-cli jobs get ID/],
    [['jobs', 'get', ID, ID], /usage: portal-cli jobs get ID/],
    [['jobs', 'get', '42'], /"42" is not a job id/],
    [['jobs', 'submit'], /needs --file/],
    [['jobs', 'list', '--url'], /--url/],
    [['usage'], /needs --month/],
    [['usage', '--month', '2026-13'], /--month must look like 2026-11/],
    [['usage', '--month', '2026-11', '--from', '2026-11-01'], /either --month or --from and --to/],
    [['usage', '--from', '2026-11-01'], /needs --month YYYY-MM, or --from and --to/],
    [['files', 'cp', PROJECT], /unknown files command "cp": use files ls, files get, files put, files mkdir, files mv, files rm/],
    [['files', 'ls'], /usage: portal-cli files ls PROJECT \[PATH\]/],
    [['files', 'ls', 'my-project'], /"my-project" is not a project id/],
    [['files', 'ls', PROJECT, 'a', 'b'], /usage: portal-cli files ls/],
    [['files', 'get', PROJECT], /usage: portal-cli files get PROJECT REMOTE/],
    [['files', 'mv', PROJECT, 'a'], /usage: portal-cli files mv PROJECT FROM TO/],
    [['files', 'put', PROJECT, 'x', '--extract'], /files put does not take --extract/],
    [['files', 'ls', PROJECT, '--recursive'], /files ls does not take --recursive/],
    [['files', 'ls', PROJECT, '--site', 'De Jena'], /--site must be a site's id/],
    [['jobs', 'logs', ID, '--task', '-1'], /--task/],
    [['jobs', 'logs', ID, '--task', 'x'], /--task must be an array task's index/],
    [['jobs', 'logs', ID, '--task', '100000'], /--task must be an array task's index/],
    [['jobs', 'watch', ID, '--follow'], /jobs watch does not take --follow/],
    [['jobs', 'list', '--site', 'de-jena'], /jobs list does not take --site/],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseCommandLine(argv)).toThrow(UsageError);
    expect(() => parseCommandLine(argv)).toThrow(message);
  });
});

describe('helpFor', () => {
  it('documents every exit code and every command', () => {
    const help = helpFor(undefined);
    for (const code of ['0  ok', '2  usage error', '3  not authenticated', '4  not found', '5  refused', '6  server error']) expect(help).toContain(code);
    for (const usage of ['login [--url URL]', 'jobs submit --file', 'jobs watch ID', 'jobs logs ID [--stderr] [--task N] [--follow]', 'files ls PROJECT [PATH] [--site SITE]', 'files get PROJECT REMOTE [LOCAL | -] [--extract]', 'files put PROJECT LOCAL [REMOTE]', 'files mkdir PROJECT PATH', 'files mv PROJECT FROM TO', 'files rm PROJECT PATH [--recursive]', 'usage --month YYYY-MM [--csv]', 'allocations'])
      expect(help).toContain(usage);
    expect(help).toContain('130  stopped by Ctrl-C');
  });

  it('takes --after for jobs submit as Slurm writes a dependency, and refuses a bad one', () => {
    const id = '3f2c0d9e-1111-4aaa-8bbb-00000000000a';
    expect(parseCommandLine(['jobs', 'submit', '--file', 'j.yaml', '--after', `afternotok:${id}`]).options.after).toEqual({ type: 'afternotok', jobIds: [id] });
    expect(() => parseCommandLine(['jobs', 'submit', '--file', 'j.yaml', '--after', 'afterok'])).toThrow(UsageError);
    expect(() => parseCommandLine(['jobs', 'list', '--after', `afterok:${id}`])).toThrow(/does not take --after/);
  });

  it('takes --array for jobs submit as Slurm writes one, and refuses what is not', () => {
    expect(parseCommandLine(['jobs', 'submit', '--file', 'j.yaml', '--array', '0-99%8']).options.array).toBe('0-99%8');
    expect(parseCommandLine(['jobs', 'submit', '--file', 'j.yaml', '--array', '1,3,5-11:2']).options.array).toBe('1,3,5-11:2');
    expect(() => parseCommandLine(['jobs', 'submit', '--file', 'j.yaml', '--array', 'all'])).toThrow(/--array" must be task indexes/);
    expect(() => parseCommandLine(['jobs', 'list', '--array', '0-9'])).toThrow(/does not take --array/);
  });

  it('shows a group’s commands', () => {
    const help = helpFor('files');
    expect(help.startsWith('Usage:\n  portal-cli files ls PROJECT')).toBe(true);
    expect(help).toContain('portal-cli files rm PROJECT PATH [--recursive] [--site SITE]');
    expect(help).not.toContain('jobs submit');
  });

  it('shows one command’s usage', () => {
    expect(helpFor('jobs watch')).toMatch(/^Usage: portal-cli jobs watch ID \[--interval SECONDS\]\n\nPrint each state change/);
  });
});
