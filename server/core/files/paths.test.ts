import { describe, expect, it } from 'vitest';
import { checkName, checkPath, connectionFileIn, isInside, joinPath, MAX_DEPTH } from './paths';

describe('checkPath', () => {
  it('splits a relative path into its names, a trailing slash allowed', () => {
    expect(checkPath('data/train.jsonl')).toEqual({ ok: true, segments: ['data', 'train.jsonl'] });
    expect(checkPath('data/')).toEqual({ ok: true, segments: ['data'] });
    expect(checkPath('Übung – 1/ä ö.txt')).toEqual({ ok: true, segments: ['Übung – 1', 'ä ö.txt'] });
    expect(checkPath('.hidden/..dots...')).toEqual({ ok: true, segments: ['.hidden', '..dots...'] });
  });

  it('allows the workspace itself only where asked', () => {
    expect(checkPath('', { allowRoot: true })).toEqual({ ok: true, segments: [] });
    expect(checkPath('')).toEqual({ ok: false, problem: 'root' });
  });

  it.each([
    ['/etc/passwd', 'absolute'],
    ['//x', 'absolute'],
    ['../x', 'dots'],
    ['a/../../x', 'dots'],
    ['a/./b', 'dots'],
    ['..', 'dots'],
    ['a//b', 'empty'],
    // A session's connection folder, wherever it is: the portal's own (issue #28).
    ['jobs/x/.portal-session/connection.json', 'reserved'],
    ['.portal-session', 'reserved'],
    ['a\u0000b', 'control'],
    ['a\nb', 'control'],
    ['a\u0085b', 'control'],
    ['a\\..\\b', 'separator'],
    ['..%2f..%2fetc', 'separator'],
    ['%2e%2e', 'separator'],
    ['a%2Fb', 'separator'],
    ['a%5cb', 'separator'],
    ['a%00b', 'separator'],
    ['x'.repeat(256), 'nameTooLong'],
    ['ä'.repeat(128), 'nameTooLong'],
    [Array.from({ length: 20 }, () => 'y'.repeat(250)).join('/'), 'tooLong'],
    [Array.from({ length: MAX_DEPTH + 1 }, () => 'd').join('/'), 'tooDeep'],
  ])('refuses %j (%s)', (input, problem) => {
    expect(checkPath(input, { allowRoot: true })).toEqual({ ok: false, problem });
  });

  it('allows a 255-byte name and percent signs that encode nothing dangerous', () => {
    expect(checkPath('x'.repeat(255)).ok).toBe(true);
    expect(checkPath('50% off/100%25.txt').ok).toBe(true);
  });
});

describe('names', () => {
  it('checks one name', () => {
    expect(checkName('model.safetensors')).toBeNull();
    expect(checkName('a/b')).toBe('separator');
    expect(checkName('')).toBe('empty');
  });

  it('joins and compares by names', () => {
    expect(joinPath(['a', 'b'])).toBe('a/b');
    expect(isInside(['a'], ['a', 'b'])).toBe(true);
    expect(isInside(['a'], ['a'])).toBe(true);
    expect(isInside(['a'], ['ab'])).toBe(false);
    expect(isInside(['a', 'b'], ['a'])).toBe(false);
  });
});

describe('connectionFileIn', () => {
  it('is the connection file in the job folder’s reserved folder, with or without a trailing slash', () => {
    expect(connectionFileIn('/ws/jobs/abc')).toBe('/ws/jobs/abc/.portal-session/connection.json');
    expect(connectionFileIn('/ws/jobs/abc/')).toBe('/ws/jobs/abc/.portal-session/connection.json');
  });
});
