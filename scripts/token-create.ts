// `npm run token:create -- --email ada@example.org --org "Jena University" --scopes read,jobs:write --days 90 [--name CI]`:
// an operator makes a personal API token for automation (a service account, a CI runner) without a
// browser. The token is printed once, on stdout alone, so `TOKEN=$(npm run -s token:create -- …)` works;
// the audit log records that an operator made it.
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { eq, or } from 'drizzle-orm';
import { organisations, users } from '~/db/schema';
import { DataDirLockedError } from '~/db/lock';
import { closeAppDb, startAppDb } from '~/server/db';
import { ConfigError } from '~/server/env.js';
import { TOKEN_SCOPES, type TokenScope } from '~/server/core/rest/scopes';
import { API_TOKEN_DEFAULT_DAYS } from '~/server/core/rest/tokens';
import { AppError } from '~/server/errors';
import { translate } from '~/server/i18n';
import { loadActor } from '~/server/services/identity/accounts';
import { createApiToken } from '~/server/services/identity/api-tokens';

const USAGE = `usage: npm run token:create -- --email EMAIL [--org ORG] --scopes ${TOKEN_SCOPES.join(',')} [--days N] [--name NAME]
  --email   the person the token acts as (an account of the portal)
  --org     the organisation it acts for: its id or exact name (not needed for a staff-only token)
  --scopes  comma-separated: ${TOKEN_SCOPES.join(', ')}
  --days    lifetime in days, 1 to 365 (default ${API_TOKEN_DEFAULT_DAYS})
  --name    what uses it (default "automation")`;

class UsageError extends Error {}

function options() {
  const { values } = parseArgs({
    options: { email: { type: 'string' }, org: { type: 'string' }, scopes: { type: 'string' }, days: { type: 'string' }, name: { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
  });
  if (values.help) return 'help' as const;
  if (!values.email) throw new UsageError('--email is required');
  if (!values.scopes) throw new UsageError('--scopes is required');
  const scopes = values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(TOKEN_SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}; known: ${TOKEN_SCOPES.join(', ')}`);
  const days = values.days === undefined ? API_TOKEN_DEFAULT_DAYS : Number(values.days);
  if (!Number.isInteger(days)) throw new UsageError('--days must be a whole number of days');
  return { email: values.email.trim().toLowerCase(), org: values.org?.trim(), scopes: scopes as TokenScope[], days, name: values.name?.trim() || 'automation' };
}

async function main() {
  let opts: ReturnType<typeof options>;
  try {
    opts = options();
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (opts === 'help') {
    console.log(USAGE);
    return;
  }
  const { db } = await startAppDb({ command: 'npm run token:create', seed: false });
  try {
    const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, opts.email));
    if (!user) throw new UsageError(`no account with the e-mail ${opts.email}`);
    let orgId: string | null = null;
    if (opts.org) {
      const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(opts.org);
      const found = await db.select({ id: organisations.id }).from(organisations).where(isUuid ? or(eq(organisations.id, opts.org), eq(organisations.name, opts.org)) : eq(organisations.name, opts.org));
      if (found.length !== 1) throw new UsageError(found.length ? `more than one organisation is called "${opts.org}": give its id` : `no organisation "${opts.org}"`);
      orgId = found[0]!.id;
    }
    const actor = await loadActor(db, user.id);
    if (!actor) throw new UsageError(`no account with the e-mail ${opts.email}`);
    const { token, view } = await createApiToken(db, actor, { name: opts.name, orgId, scopes: opts.scopes, expiresInDays: opts.days }, new Date(), { operator: userInfo().username });
    console.error(`Token "${view.name}" for ${opts.email}${view.orgName ? ` in ${view.orgName}` : ''}, scopes ${view.scopes.join(' ')}, valid until ${view.expiresAt.toISOString()}. It is shown only now:`);
    console.log(token);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      process.exitCode = 2;
    } else if (error instanceof AppError) {
      console.error(`${error.field ? `--${error.field === 'orgId' ? 'org' : error.field === 'expiresInDays' ? 'days' : error.field}: ` : ''}${translate('en', error.key, error.params)}`);
      process.exitCode = 2;
    } else throw error;
  } finally {
    await closeAppDb();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof DataDirLockedError || error instanceof ConfigError ? error.message : error);
  process.exitCode = 1;
});
