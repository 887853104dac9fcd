import { describe, expect, it } from 'vitest';
import { isPosixName, posixNameCandidates, projectGroupName } from './identity';

function first(email: string, n: number): string[] {
  const out: string[] = [];
  for (const name of posixNameCandidates(email)) {
    out.push(name);
    if (out.length === n) break;
  }
  return out;
}

describe('POSIX identity', () => {
  it("names a project's group from its id: stable, portable, the same on both backends", () => {
    expect(projectGroupName('0b9e4f2a-1c3d-4e5f-8a7b-9c0d1e2f3a4b')).toBe('p0b9e4f2a1c3d4e5f');
    expect(isPosixName(projectGroupName('FFFFFFFF-1C3D-4E5F-8A7B-9C0D1E2F3A4B'))).toBe(true);
    expect(() => projectGroupName('not-a-project')).toThrow(/not a project id/);
  });

  it('makes user names from the mail address: portable, then numbered when taken', () => {
    expect(first('Anna.Müller+gpu@uni.example', 3)).toEqual(['anna_muller', 'anna_muller2', 'anna_muller3']);
    expect(first('owner-3f2a@example.org', 1)).toEqual(['owner-3f2a']);
    expect(first('42@example.org', 2)).toEqual(['u', 'u2']);
    expect(first(`${'x'.repeat(60)}@example.org`, 1)[0]).toHaveLength(28);
    for (const email of ['Ünïcødé@x', '-lead@x', '...@x', '_a_@x', 'a b@x']) for (const name of first(email, 12)) expect(isPosixName(name), `${email} → ${name}`).toBe(true);
  });

  it('takes only names useradd and Slurm take portably', () => {
    for (const ok of ['alice', '_svc', 'a-b_c9', 'x'.repeat(32)]) expect(isPosixName(ok)).toBe(true);
    for (const bad of ['', 'Alice', '9lives', '-x', 'a.b', 'a b', 'x'.repeat(33), 'root;rm']) expect(isPosixName(bad)).toBe(false);
  });
});
