// The authorisation matrix, built from the router itself: every procedure × every kind of caller
// (anonymous; member, manager and owner of tenant A; owner of tenant B; a reviewer; an admin) on
// records of tenant A, checked against the policy declared in server/testing/authorization-policy.ts. A procedure added to the router
// without an entry there fails the first test, so nobody forgets to say who may call it.
//
// A caller the policy refuses must be refused (UNAUTHORIZED when signed out, else FORBIDDEN or
// NOT_FOUND) and, for a mutation, change no row. A caller it allows must get an answer to a query;
// allowed mutations are not run here (they would change the records the rest of the matrix uses):
// the functional tests run them.
import { describe, expect, it } from 'vitest';
import { allowed, callAs, fingerprint, policyFixture, POLICY, procedures, ROLES } from '~/server/testing/authorization-policy';
import { dbTargets } from '~/server/testing/harness';

describe('the authorisation policy', () => {
  it('has an entry for every procedure of the router, and none for a procedure that does not exist', () => {
    expect(Object.keys(procedures).filter((p) => !(p in POLICY)), 'procedures without a policy entry').toEqual([]);
    expect(Object.keys(POLICY).filter((p) => !(p in procedures)), 'policy entries without a procedure').toEqual([]);
  });
});

describe.each(dbTargets())('the authorisation matrix on %s', (target) => {
  const db = policyFixture(target);

  it.each(Object.keys(POLICY))('%s', async (path) => {
    const entry = POLICY[path]!;
    const type = procedures[path]!._def.type;
    for (const role of ROLES) {
      const expectAllowed = allowed(entry, role);
      if (expectAllowed && type === 'mutation') continue;
      const { outcome, before } = await callAs(db.handle.db, db.people, role, path, entry.input?.(db.fixture));
      if (expectAllowed) {
        expect(outcome, `${role} may call ${path}`).toBe(entry.allowedAnswer ?? 'answered');
      } else {
        expect(outcome, `${role} must be refused ${path}`).toMatch(role === 'anonymous' ? /^UNAUTHORIZED$/ : /^(FORBIDDEN|NOT_FOUND)$/);
        if (before) expect(await fingerprint(db.handle.db), `${role} refused ${path} changed nothing`).toEqual(before);
      }
    }
  });
});
