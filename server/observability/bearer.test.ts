import { describe, expect, it } from 'vitest';
import { bearerMatches } from './bearer';

const SECRET = 'a-metrics-secret-0123456789';

describe('bearerMatches', () => {
  it.each([
    [`Bearer ${SECRET}`, true],
    [`bearer ${SECRET}`, true],
    [`Bearer  ${SECRET} `, true],
    [null, false],
    ['', false],
    ['Bearer', false],
    [`Basic ${SECRET}`, false],
    [`Bearer ${SECRET}x`, false],
    [`Bearer ${SECRET.slice(0, -1)}`, false],
    [`Bearer ${SECRET} extra`, false],
    [SECRET, false],
  ])('%j → %s', (header, expected) => {
    expect(bearerMatches(header, SECRET)).toBe(expected);
  });
});
