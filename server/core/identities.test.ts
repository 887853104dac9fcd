import { describe, expect, it } from 'vitest';
import { claimValues, entitledMemberships, ssoProfileOf, ssoResolution, unlinkRefusal } from './identities';

const NAMES = { email: 'email', name: 'name', entitlements: 'eduPersonEntitlement' };

describe('ssoProfileOf', () => {
  it('reads the claims, lower-cases the address and believes email_verified only when it is true', () => {
    expect(ssoProfileOf('kc', { sub: 'abc', email: ' Ada@Example.ORG ', email_verified: true, name: 'Ada', eduPersonEntitlement: 'urn:x' }, NAMES)).toEqual({
      provider: 'kc',
      subject: 'abc',
      email: 'ada@example.org',
      emailVerified: true,
      name: 'Ada',
      entitlements: ['urn:x'],
      posixName: null,
    });
    expect(ssoProfileOf('kc', { sub: 'abc', email: 'ada@example.org', email_verified: 'true' }, NAMES)?.emailVerified).toBe(true);
    expect(ssoProfileOf('kc', { sub: 'abc', email: 'ada@example.org', email_verified: 'yes' }, NAMES)?.emailVerified).toBe(false);
    expect(ssoProfileOf('kc', { sub: 'abc', email: 'not-an-address' }, NAMES)).toMatchObject({ email: null, emailVerified: false });
    expect(ssoProfileOf('kc', { email: 'ada@example.org' }, NAMES)).toBeNull();
  });

  it("reads the person's POSIX user from the claim the provider is told to use, and only a valid name", () => {
    const names = { ...NAMES, posixName: 'uid' };
    expect(ssoProfileOf('kc', { sub: 'a', email: 'ada@example.org', uid: 'alovelace' }, names)?.posixName).toBe('alovelace');
    expect(ssoProfileOf('kc', { sub: 'a', email: 'ada@example.org', uid: ['Ada Lovelace', 'ada2'] }, names)?.posixName).toBe('ada2');
    expect(ssoProfileOf('kc', { sub: 'a', email: 'ada@example.org', uid: '../root' }, names)?.posixName).toBeNull();
    expect(ssoProfileOf('kc', { sub: 'a', email: 'ada@example.org', uid: 'alovelace' }, NAMES)?.posixName).toBeNull();
  });

  it('uses the configured claim names', () => {
    expect(ssoProfileOf('aai', { sub: 's', mail: 'b@example.org', displayName: 'B', groups: ['g1', 2, 'g2'] }, { email: 'mail', name: 'displayName', entitlements: 'groups' })).toMatchObject({
      email: 'b@example.org',
      name: 'B',
      entitlements: ['g1', 'g2'],
    });
  });
});

describe('claimValues', () => {
  it.each([
    ['urn:a', ['urn:a']],
    [['urn:a', 'urn:b'], ['urn:a', 'urn:b']],
    ['', []],
    [undefined, []],
    [42, []],
  ] as const)('%j → %j', (value, expected) => {
    expect(claimValues({ c: value }, 'c')).toEqual(expected);
  });
});

describe('ssoResolution', () => {
  it.each([
    [{ linkedUserId: 'u1', email: 'a@x.org', sameEmailUserId: 'u2' }, { kind: 'known', userId: 'u1' }],
    [{ linkedUserId: null, email: 'a@x.org', sameEmailUserId: 'u2' }, { kind: 'confirmLink', userId: 'u2' }],
    [{ linkedUserId: null, email: 'a@x.org', sameEmailUserId: null }, { kind: 'create' }],
    [{ linkedUserId: null, email: null, sameEmailUserId: null }, { kind: 'refused', reason: 'noEmail' }],
  ] as const)('%j → %j', (input, expected) => {
    expect(ssoResolution(input)).toEqual(expected);
  });
});

describe('entitledMemberships', () => {
  const mappings = [
    { value: 'urn:lab', org: 'Lab', role: 'member' as const },
    { value: 'urn:lab-lead', org: 'lab', role: 'owner' as const },
    { value: 'urn:inst', org: 'Institute', role: 'manager' as const },
  ];
  it('grants each organisation once, the first matching mapping winning', () => {
    expect(entitledMemberships(['urn:lab-lead', 'urn:lab'], mappings)).toEqual([mappings[0]]);
    expect(entitledMemberships(['urn:inst', 'urn:other'], mappings)).toEqual([mappings[2]]);
    expect(entitledMemberships([], mappings)).toEqual([]);
  });
});

describe('unlinkRefusal', () => {
  it.each([
    [{ hasPassword: false, identities: 1 }, 'lastWayIn'],
    [{ hasPassword: false, identities: 2 }, null],
    [{ hasPassword: true, identities: 1 }, null],
  ] as const)('%j → %s', (input, expected) => {
    expect(unlinkRefusal(input)).toBe(expected);
  });
});
