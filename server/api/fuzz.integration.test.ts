// Fuzzing every procedure (fast-check): random JSON, and each procedure's valid input with one field
// replaced by something hostile (a NUL byte, a huge or negative number, a deep object, another type).
// Whatever comes in, the answer is never a 500 (INTERNAL_SERVER_ERROR), and a refused mutation
// changes no row. Each procedure is called as the first kind of caller its policy allows
// (server/testing/authorization-policy.ts), so the input reaches as deep as it can.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allowed, callAs, fingerprint, policyFixture, POLICY, ROLES } from '~/server/testing/authorization-policy';
import { dbTargets } from '~/server/testing/harness';

/** Runs per procedure and database (CI keeps the whole file under a minute). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

const hostileValue = fc.oneof(
  fc.string(),
  fc.string().map((s) => `${s}\u0000${s}`),
  fc.string({ minLength: 1 }).map((s) => s.repeat(5_000)),
  fc.integer(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -1, 0, 1e308, -0, 2 ** 53 + 1),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('00000000-0000-4000-8000-000000000000', '../../etc/passwd', '<script>alert(1)</script>', "' or 1=1 --", '2026-02-30', '9999-99'),
  fc.array(fc.jsonValue(), { maxLength: 5 }),
  fc.letrec((tie) => ({ deep: fc.oneof({ depthSize: 'small' }, fc.constant({}), fc.record({ a: tie('deep') })) })).deep,
  fc.jsonValue(),
);

/** An input: random JSON, nothing, or the valid input with one field (or one level down) made hostile. */
function inputs(valid: unknown): fc.Arbitrary<unknown> {
  const choices: fc.Arbitrary<unknown>[] = [fc.jsonValue(), fc.constant(undefined), hostileValue];
  if (valid && typeof valid === 'object' && !Array.isArray(valid)) {
    const keys = Object.keys(valid);
    if (keys.length > 0) {
      choices.push(
        fc.record({ key: fc.constantFrom(...keys), value: hostileValue }).map(({ key, value }) => ({ ...(valid), [key]: value })),
        fc.constantFrom(...keys).map((key) => {
          const copy: Record<string, unknown> = { ...(valid) };
          delete copy[key];
          return copy;
        }),
        fc.record({ extra: fc.string({ maxLength: 20 }), value: hostileValue }).map(({ extra, value }) => ({ ...(valid), [extra]: value })),
      );
    }
  }
  return fc.oneof(...choices);
}

describe.each(dbTargets())('fuzzing every procedure on %s', (target) => {
  const db = policyFixture(target);

  it.each(Object.keys(POLICY))('%s', async (path) => {
    const entry = POLICY[path]!;
    const role = ROLES.find((r) => allowed(entry, r)) ?? 'admin';
    await fc.assert(
      fc.asyncProperty(inputs(entry.input?.(db.fixture)), async (input) => {
        const { outcome, before } = await callAs(db.handle.db, db.people, role, path, input);
        expect(outcome, `${path} as ${role} with ${JSON.stringify(input)?.slice(0, 300)}`).not.toMatch(/^(INTERNAL_SERVER_ERROR|crashed)/);
        if (before && outcome !== 'answered') expect(await fingerprint(db.handle.db), `${path} refused but changed rows`).toEqual(before);
      }),
      { numRuns: RUNS },
    );
  });
});
