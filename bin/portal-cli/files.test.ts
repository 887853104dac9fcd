// The small rules of `files …`: paths as typed, which upload failures are tried again, and how tus's
// failures become the CLI's errors (so the exit codes hold).
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from './api.mjs';
import { exitCodeFor } from './exit-codes.mjs';
import { shouldRetryUpload, tusError, workspacePath } from './files.mjs';

/** What tus-js-client's DetailedError carries: the request, and the answer when there was one. */
function tusFailure(method: string, status: number | null, body = '') {
  return Object.assign(new Error('tus: failed'), {
    originalRequest: { getMethod: () => method, getURL: () => 'http://portal.test/api/v1/uploads/de-jena.x' },
    originalResponse: status === null ? null : { getStatus: () => status, getBody: () => body },
    causingError: status === null ? Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), { code: 'ECONNREFUSED' }) : undefined,
  });
}

describe('workspacePath', () => {
  it.each([
    ['', ''],
    ['.', ''],
    ['./', ''],
    ['./data/', 'data'],
    ['data/raw//', 'data/raw'],
    ['data//raw', 'data//raw'], // the portal names what is wrong with it
    ['/etc', '/etc'],
  ])('%j → %j', (typed, expected) => {
    expect(workspacePath(typed)).toBe(expected);
  });
});

describe('shouldRetryUpload', () => {
  it.each([
    ['no answer', tusFailure('PATCH', null), true],
    ['a 5xx', tusFailure('PATCH', 502), true],
    ['a 429', tusFailure('POST', 429), true],
    ['an offset that moved (409 on a PATCH)', tusFailure('PATCH', 409), true],
    ['a locked upload (423)', tusFailure('HEAD', 423), true],
    ['a name already taken (409 on the POST)', tusFailure('POST', 409), false],
    ['a refused path (400)', tusFailure('POST', 400), false],
    ['a token without files:write (403)', tusFailure('POST', 403), false],
    ['an upload someone else started (404)', tusFailure('HEAD', 404), false],
  ])('%s → %s', (_what, error, expected) => {
    expect(shouldRetryUpload(error)).toBe(expected);
  });
});

describe('tusError', () => {
  it('reads the portal’s plain-text refusal and its JSON error shape, so the exit codes hold', () => {
    const taken = tusError(tusFailure('POST', 409, 'path: A file or folder of that name is already there: choose another name or delete it first.\n'), 'e');
    expect(taken).toBeInstanceOf(ApiError);
    expect(taken.message).toBe('path: A file or folder of that name is already there: choose another name or delete it first.');
    expect(exitCodeFor(taken)).toBe(5);
    const unauthorised = tusError(tusFailure('POST', 401, JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'The token is not valid', requestId: 'r1' } })), 'e');
    expect(unauthorised).toMatchObject({ status: 401, code: 'UNAUTHORIZED', message: 'The token is not valid', requestId: 'r1' });
    expect(exitCodeFor(unauthorised)).toBe(3);
    expect(exitCodeFor(tusError(tusFailure('HEAD', 404, 'The upload was not found.'), 'e'))).toBe(4);
  });

  it('no answer at all is a network error (exit 6)', () => {
    const error = tusError(tusFailure('PATCH', null), 'e');
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(exitCodeFor(error)).toBe(6);
  });
});
