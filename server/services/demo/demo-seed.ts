// The demo centre, seeded on the first start of an empty database in demo mode (and by `npm run db:seed`).
// Never called when PORTAL_ENV=production.
import { portalBaseUrl } from '~/server/env.js';
import { count, eq } from 'drizzle-orm';
import type { Db } from '~/db/client';
import { organisations, staffRoles, users } from '~/db/schema';
import { hashPassword } from '~/server/auth/password';
import { signUp } from '~/server/services/identity/accounts';
import { recordAudit } from '~/server/services/audit';
import { seedDemoHistory } from './demo-history';
import { createInvitation } from '~/server/services/tenants/invitations';
import { atDemoTime } from './demo-clock';

export const DEMO_PASSWORD = 'demo-password';

export const DEMO_SIGN_INS = [
  { email: 'admin@centre.example', who: 'centre staff admin' },
  { email: 'reviewer@centre.example', who: 'centre reviewer' },
  { email: 'pi@uni.example', who: 'PI, owner of Rhine Valley University (academic)' },
  { email: 'member@uni.example', who: 'member of Rhine Valley University, PI of a small Playground project' },
  { email: 'owner@company.example', who: 'owner of Example Robotics GmbH (company)' },
] as const;

const DAY_MS = 86_400_000;

/**
 * seedDemoCentre creates the demo staff, a university tenant and a company tenant, dated months
 * before `now` (the university five months ago, the company verified in the summer) as the history expects.
 */
// The demo's people are known: their addresses count as verified, and no verification mail is written.
const DEMO_ACCOUNT = { verified: true } as const;

export async function seedDemoCentre(db: Db, now: Date = new Date()): Promise<void> {
  const ago = (days: number, hourUtc: number) => {
    const day = new Date(now.getTime() - days * DAY_MS);
    return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), hourUtc));
  };
  const passwordHash = await hashPassword(DEMO_PASSWORD);
  await atDemoTime(db, ago(200, 9), async () => {
    for (const [email, name, role] of [
      ['admin@centre.example', 'Alex Admin', 'admin'],
      ['reviewer@centre.example', 'Robin Reviewer', 'reviewer'],
    ] as const) {
      const [user] = await db.insert(users).values({ email, name, passwordHash, emailVerifiedAt: new Date() }).returning({ id: users.id });
      await db.insert(staffRoles).values({ userId: user!.id, role });
    }
  });
  const uni = await atDemoTime(db, ago(160, 10), () => signUp(db, {
    name: 'Dr. Paula Investigator',
    email: 'pi@uni.example',
    password: DEMO_PASSWORD,
    organisation: { name: 'Rhine Valley University', kind: 'academic', country: 'DE', residency: 'EU' },
  }, DEMO_ACCOUNT));
  const piActor = {
    userId: uni.userId,
    email: 'pi@uni.example',
    name: 'Dr. Paula Investigator',
    staffRoles: [],
    org: { id: uni.orgId, name: 'Rhine Valley University', kind: 'academic' as const, status: 'active' as const },
    role: 'owner' as const,
  };
  const invite = await atDemoTime(db, ago(159, 8), () => createInvitation(db, piActor, { email: 'member@uni.example', role: 'member' }, { locale: 'en', baseUrl: portalBaseUrl() }));
  await atDemoTime(db, ago(158, 13), () => signUp(db, { name: 'Max Member', email: 'member@uni.example', password: DEMO_PASSWORD, invitationToken: invite.token }));

  const company = await atDemoTime(db, ago(112, 15), () => signUp(db, {
    name: 'Olivia Owner',
    email: 'owner@company.example',
    password: DEMO_PASSWORD,
    organisation: { name: 'Example Robotics GmbH', kind: 'company', country: 'DE', residency: 'DE' },
  }, DEMO_ACCOUNT));
  const [admin] = await db.select({ id: users.id }).from(users).where(eq(users.email, 'admin@centre.example'));
  await db.update(organisations).set({ status: 'active', statusReason: 'Commercial register entry and VAT ID checked' }).where(eq(organisations.id, company.orgId));
  await atDemoTime(db, ago(110, 11), () => recordAudit(db, {
    actorUserId: admin!.id,
    orgId: company.orgId,
    action: 'tenant.verified',
    targetType: 'organisation',
    targetId: company.orgId,
    reason: 'Commercial register entry and VAT ID checked',
    data: { from: 'pending_verification', to: 'active' },
    isStaffAction: true,
  }));
}

/** seedDemoCentreIfEmpty seeds the demo centre when the database has no users yet; returns whether it did. */
export async function seedDemoCentreIfEmpty(db: Db, options: { log?: (line: string) => void; now?: Date } = {}): Promise<boolean> {
  const [row] = await db.select({ n: count() }).from(users);
  if ((row?.n ?? 0) > 0) return false;
  const now = options.now ?? new Date();
  await seedDemoCentre(db, now);
  await seedDemoHistory(db, now);
  options.log?.(demoSignInBanner());
  return true;
}

/** demoSignInBanner is the console text listing the demo sign-ins. */
export function demoSignInBanner(): string {
  const width = Math.max(...DEMO_SIGN_INS.map((s) => s.email.length));
  return [
    '',
    'Demo centre seeded. Sign in with any of these (password: ' + DEMO_PASSWORD + '):',
    ...DEMO_SIGN_INS.map((s) => `  ${s.email.padEnd(width)}  ${s.who}`),
    '',
  ].join('\n');
}
