import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify, classifyEntry, errorEntries, isSlurmError, SlurmError, toSlurmError, type SlurmErrorKind } from './errors';

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8'));
}

const ctld = (errors: Record<string, unknown>[]) => ({ meta: {}, errors, jobs: [] });

describe('classify: the table of the issue', () => {
  const rows: { case: string; status: number; body: unknown; kind: SlurmErrorKind | null; code?: number | null }[] = [
    { case: 'a success with no errors', status: 200, body: fixture('03-job-get.resp.json'), kind: null },
    { case: 'nothing found (9003) is no failure', status: 200, body: ctld([{ error_number: 9003, error: 'Nothing found' }]), kind: null },
    { case: 'unknown job id (recorded): 2017', status: 500, body: fixture('10-job-get-unknown.resp.json'), kind: 'not-found', code: 2017 },
    { case: 'too many GPUs (recorded): 2014', status: 500, body: fixture('08-submit-too-many-gpus.resp.json'), kind: 'permanent', code: 2014 },
    { case: 'no environment (recorded): 2127 + 9001', status: 500, body: fixture('09-submit-missing-environment.resp.json'), kind: 'permanent', code: 2127 },
    { case: 'invalid account 2045', status: 500, body: ctld([{ error_code: 2045, error: 'Invalid account or account/partition combination specified' }]), kind: 'permanent', code: 2045 },
    { case: 'a node feature no node has 2029', status: 500, body: ctld([{ error_code: 2029, error: 'Invalid feature specification' }]), kind: 'permanent', code: 2029 },
    { case: 'a reservation Slurm does not know 2053', status: 500, body: ctld([{ error_code: 2053, error: 'Requested reservation is invalid' }]), kind: 'permanent', code: 2053 },
    { case: 'accounting policy 2050 (DenyOnLimit)', status: 500, body: ctld([{ error_code: 2050, error: 'Job violates accounting/QOS policy' }]), kind: 'permanent', code: 2050 },
    { case: 'invalid partition 2000', status: 500, body: ctld([{ error_code: 2000, error: 'Invalid partition name specified' }]), kind: 'permanent', code: 2000 },
    { case: 'invalid partition by text only', status: 500, body: ctld([{ error_number: -1, error: 'Unspecified error', description: 'Invalid partition name specified' }]), kind: 'permanent', code: -1 },
    {
      case: 'expired token: 500 -1 from slurm_load_ctl_conf',
      status: 500,
      body: ctld([{ description: 'slurmctld config is unable to load', error_number: -1, error: 'Unspecified error', source: 'slurm_load_ctl_conf' }]),
      kind: 'auth',
      code: -1,
    },
    { case: 'expired token on submit: 5005', status: 500, body: ctld([{ error_code: 5005, error: 'Zero Bytes were transmitted or received' }]), kind: 'auth', code: 5005 },
    { case: 'expired token on /slurmdb: 200 + 1007', status: 200, body: ctld([{ error_number: 1007, error: 'Protocol authentication error', source: 'slurmdb_connection_get' }]), kind: 'auth', code: 1007 },
    { case: 'slurmdbd down: 200 + 7000', status: 200, body: ctld([{ error_number: 7000, error: 'Unable to connect to database', source: 'slurmdb_jobs_get' }]), kind: 'unreachable', code: 7000 },
    { case: 'slurmctld down on submit: 1800', status: 500, body: ctld([{ error_code: 1800, error: 'Unable to contact slurm controller (connect failure)' }]), kind: 'unreachable', code: 1800 },
    {
      case: 'slurmctld down on /job/{id}: -1 "Unable to find JobId" is not "not found"',
      status: 500,
      body: ctld([{ description: 'Unable to find JobId=5', error_number: -1, error: 'Unspecified error', source: 'slurm_load_job' }]),
      kind: 'transient',
      code: -1,
    },
    { case: 'a 200 with any other error entry is a failure', status: 200, body: ctld([{ error_number: 2090, error: 'Internal error' }]), kind: 'transient', code: 2090 },
    { case: 'the auth entry outranks the rest', status: 500, body: ctld([{ error_code: 2014 }, { error_code: 5005 }]), kind: 'auth', code: 5005 },
    { case: 'GET /nodes names the number errno', status: 500, body: ctld([{ error: 'Unspecified error', errno: -1 }]), kind: 'transient', code: -1 },
    { case: 'only "nothing found", even with a 500', status: 500, body: ctld([{ error_number: 9003, error: 'Nothing found with query' }]), kind: null },
    { case: '401 without entries', status: 401, body: 'Authentication failure', kind: 'auth', code: null },
    { case: '400 (raw comma in a query) without entries', status: 400, body: 'Unable to parse query', kind: 'permanent', code: null },
    { case: '503 from a proxy', status: 503, body: '', kind: 'unreachable', code: null },
    { case: '500 without entries', status: 500, body: null, kind: 'transient', code: null },
  ];
  it.each(rows)('$case', (row) => {
    const failure = classify({ status: row.status, body: row.body });
    if (row.kind === null) {
      expect(failure).toBeNull();
      return;
    }
    expect(failure).toMatchObject({ kind: row.kind, code: row.code ?? null, status: row.status });
  });

  it('no answer at all (ECONNREFUSED, timeout) is unreachable', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6820'), { code: 'ECONNREFUSED' }) });
    expect(classify({ network: refused })).toMatchObject({ kind: 'unreachable', code: null, status: null });
    expect(classify({ network: refused })?.message).toContain('ECONNREFUSED');
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    expect(classify({ network: timeout })?.message).toContain('timed out');
  });
});

describe('errorEntries', () => {
  it('reads both shapes of v0.0.38 error objects', () => {
    expect(errorEntries(fixture('09-submit-missing-environment.resp.json'))).toEqual([
      { code: 2127, error: 'environment must be set', description: null, source: null },
      { code: 9001, error: 'Failure during parsing', description: null, source: null },
    ]);
    expect(errorEntries(fixture('10-job-get-unknown.resp.json'))).toEqual([
      { code: 2017, error: 'Invalid job id specified', description: 'Unable to find JobId=999999', source: 'slurm_load_job' },
    ]);
  });
  it('reads nothing from bodies without an errors array', () => {
    expect(errorEntries(null)).toEqual([]);
    expect(errorEntries('text')).toEqual([]);
    expect(errorEntries({ errors: 'x' })).toEqual([]);
  });
  it('an entry without a number is transient', () => {
    expect(classifyEntry({ code: null, error: 'x', description: null, source: null })).toBe('transient');
  });
  it('the whole auth range is auth', () => {
    expect(classifyEntry({ code: 6001, error: null, description: null, source: null })).toBe('auth');
  });
});

describe('SlurmError', () => {
  it('carries kind, code, status and entries', () => {
    const failure = classify({ status: 500, body: fixture('10-job-get-unknown.resp.json') });
    expect(failure).not.toBeNull();
    const error = toSlurmError(failure!, 'getJob 999999');
    expect(error).toBeInstanceOf(SlurmError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ kind: 'not-found', code: 2017, status: 500, name: 'SlurmError' });
    expect(error.message).toContain('getJob 999999');
    expect(isSlurmError(error, 'not-found')).toBe(true);
    expect(isSlurmError(error, 'auth')).toBe(false);
    expect(isSlurmError(new Error('x'))).toBe(false);
  });
});
