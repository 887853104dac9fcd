import { describe, expect, it } from 'vitest';
import { effectivePreferences, isMailKind, MAIL_KINDS, wantsEmail, type MailKind } from './kinds';

describe('mail kinds and preferences', () => {
  it.each([
    ['application_decided', undefined, true],
    ['application_decided', false, false],
    ['job_finished', undefined, false],
    ['job_finished', true, true],
    ['budget_threshold', true, true],
    // An invitation cannot be turned off: it is the link to join.
    ['invitation', false, true],
  ] as [MailKind, boolean | undefined, boolean][])('%s, chosen %s → mail %s', (kind, chosen, expected) => {
    expect(wantsEmail(kind, chosen)).toBe(expected);
  });

  it('lists every kind once, the choices made and the defaults for the rest', () => {
    const list = effectivePreferences(new Map([['tenant_status', false], ['job_finished', true]]));
    expect(list.map((p) => p.kind)).toEqual(MAIL_KINDS.map((k) => k.kind));
    expect(new Set(list.map((p) => p.kind)).size).toBe(MAIL_KINDS.length);
    expect(list.find((p) => p.kind === 'tenant_status')).toMatchObject({ email: false, emailByDefault: true });
    expect(list.find((p) => p.kind === 'job_finished')).toMatchObject({ email: true, emailByDefault: false });
    expect(list.find((p) => p.kind === 'invoice_issued')).toMatchObject({ email: true });
  });

  it('tells its kinds from other words', () => {
    expect(isMailKind('invoice_issued')).toBe(true);
    expect(isMailKind('password_reset')).toBe(false);
    expect(isMailKind(undefined)).toBe(false);
  });
});
