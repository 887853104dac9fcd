// People and their sign-up: a new user with a new organisation, or a new user joining by invitation;
// sign-up answers alike whether or not an address has an account (requestSignUp). A new password
// account starts with its address unverified and is mailed a link (server/services/identity/email-verification.ts).
import { eq, sql, type SQL } from 'drizzle-orm';
import type { Db, DbOrTx, Tx } from '~/db/client';
import { reusable } from '~/db/reusable';
import { memberships, organisations, sessions, staffRoles, users, type OrgKind, type Residency, type StaffRole } from '~/db/schema';
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '~/server/auth/password';
import { AppError, isUniqueViolation } from '~/server/errors';
import type { Actor, Caller, Membership } from '~/server/services/actor';
import { defaultAccountMail, type AccountMail } from './account-mail';
import { mailVerificationLink } from './email-verification';
import { recordAudit } from '~/server/services/audit';
import { acceptInvitationInTx, previewInvitation } from '~/server/services/tenants/invitations';
import { notify } from '~/server/services/mail/notifications';
import { touchSession } from './sessions';

export interface SignUpInput {
  name: string;
  email: string;
  password: string;
  organisation?: { name: string; kind: OrgKind; country: string; residency: Residency };
  invitationToken?: string;
}

export interface SignUpOptions {
  /** The language and links of the verification mail (default: English, the configured address). */
  mail?: AccountMail;
  /**
   * The address is known to be the person's (the demo seed, test fixtures): no verification mail. Not
   * reachable from the API, whose input has no such field.
   */
  verified?: boolean;
  now?: Date;
  /** The client address of the request (stored with the verification link). */
  requestedFrom?: string | null;
}

export interface SignUpResult {
  userId: string;
  orgId: string;
}

/** signUp creates a user and either a new organisation it owns or its membership from an invitation, in one transaction. */
export async function signUp(db: Db, input: SignUpInput, options: SignUpOptions = {}): Promise<SignUpResult> {
  await checkInvitationEmail(db, input);
  const passwordHash = await hashPassword(input.password);
  const now = options.now ?? new Date();
  try {
    return await db.transaction(async (tx) => {
      const [user] = await tx
        .insert(users)
        .values({ name: input.name, email: input.email, passwordHash, emailVerifiedAt: options.verified ? now : null })
        .returning({ id: users.id });
      if (!user) throw new Error('user insert returned nothing');
      const result = await joinOrFound(tx, { userId: user.id, email: input.email, name: input.name, staffRoles: [] }, input);
      // Joining by an invitation mailed to the address verified it (acceptInvitationInTx); founding did not.
      if (!options.verified && !input.invitationToken) {
        await mailVerificationLink(tx, { userId: user.id, email: input.email, name: input.name }, options.mail ?? defaultAccountMail(), now, options.requestedFrom);
      }
      return result;
    });
  } catch (error) {
    throw signUpConflict(error);
  }
}

/**
 * requestSignUp is sign-up as the form and the API offer it: it answers the same whether or not the
 * e-mail already has an account, so nobody can find out who has one. A new address gets its account;
 * a known one with that account's own password gets the new organisation (or the invitation) added to
 * the account; a known one with another password gets nothing, and the account's owner is told that
 * someone tried (in-app notice and audit row); the account keeps its verification state. Either way
 * the next step is to sign in. Each path costs one password hash or check, so the time taken does not
 * tell them apart either.
 */
export async function requestSignUp(db: Db, input: SignUpInput, options: Omit<SignUpOptions, 'verified'> = {}): Promise<{ next: 'signIn' }> {
  const [known] = await db
    .select({ id: users.id, email: users.email, name: users.name, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(sql`lower(${users.email})`, input.email.trim().toLowerCase()));
  if (!known) {
    await signUp(db, input, options);
    return { next: 'signIn' };
  }
  await checkInvitationEmail(db, input);
  const provedOwner = await verifyPassword(input.password, known.passwordHash);
  try {
    await db.transaction(async (tx) => {
      if (provedOwner) {
        const actor: Actor = { userId: known.id, email: known.email, name: known.name, staffRoles: [] };
        await joinOrFound(tx, actor, input);
        return;
      }
      // Refused the same way as for a new address: an organisation name that is taken is named.
      if (input.organisation) await assertOrgNameFree(tx, input.organisation.name);
      await recordAudit(tx, { actorUserId: null, orgId: null, action: 'account.sign_up_attempt', targetType: 'user', targetId: known.id, data: { invitation: Boolean(input.invitationToken) } });
      await notify(tx, [known.id], 'notice.signUpAttempt', {}, '/profile');
    });
  } catch (error) {
    throw signUpConflict(error);
  }
  return { next: 'signIn' };
}

/** An invitation is for one address: signing up with it under another is refused on the field. */
async function checkInvitationEmail(db: Db, input: SignUpInput): Promise<void> {
  if (!input.organisation && !input.invitationToken) {
    throw new AppError('BAD_REQUEST', 'validation.required', {}, 'organisation.name');
  }
  if (input.invitationToken) {
    const invitation = await previewInvitation(db, input.invitationToken);
    if (invitation.email !== input.email) {
      throw new AppError('FORBIDDEN', 'error.invitationOtherEmail', { email: invitation.email }, 'email');
    }
  }
}

async function assertOrgNameFree(tx: Tx, name: string): Promise<void> {
  const [taken] = await tx.select({ id: organisations.id }).from(organisations).where(eq(sql`lower(${organisations.name})`, name.toLowerCase()));
  if (taken) throw new AppError('CONFLICT', 'error.orgNameTaken', {}, 'organisation.name');
}

/** joinOrFound makes a person a member by their invitation, or the owner of the organisation they found. */
async function joinOrFound(tx: Tx, actor: Actor, input: SignUpInput): Promise<SignUpResult> {
  if (input.invitationToken) {
    const { orgId } = await acceptInvitationInTx(tx, actor, input.invitationToken);
    return { userId: actor.userId, orgId };
  }
  const org = input.organisation!;
  const [created] = await tx
    .insert(organisations)
    .values({
      name: org.name,
      kind: org.kind,
      country: org.country,
      residency: org.residency,
      // Companies are checked by the centre before they may use compute.
      status: org.kind === 'company' ? 'pending_verification' : 'active',
    })
    .returning({ id: organisations.id, status: organisations.status });
  if (!created) throw new Error('organisation insert returned nothing');
  await tx.insert(memberships).values({ orgId: created.id, userId: actor.userId, role: 'owner' });
  await recordAudit(tx, {
    actorUserId: actor.userId,
    orgId: created.id,
    action: 'tenant.signed_up',
    targetType: 'organisation',
    targetId: created.id,
    data: { kind: org.kind, country: org.country, residency: org.residency, status: created.status },
  });
  return { userId: actor.userId, orgId: created.id };
}

/** signUpConflict turns a unique violation of sign-up into the refusal on its field. */
function signUpConflict(error: unknown): unknown {
  // A second sign-up with the same new address at the same moment: the first one won.
  if (isUniqueViolation(error, 'users_email_lower_idx')) return new AppError('CONFLICT', 'error.emailTaken', {}, 'email');
  if (isUniqueViolation(error, 'organisations_name_lower_idx')) return new AppError('CONFLICT', 'error.orgNameTaken', {}, 'organisation.name');
  return error;
}

/** hasPassword says whether an account can sign in with a password (one made through single sign-on has none until it sets one). */
export async function hasPassword(db: DbOrTx, userId: string): Promise<boolean> {
  const [row] = await db.select({ set: sql<boolean>`${users.passwordHash} is not null` }).from(users).where(eq(users.id, userId));
  return row?.set ?? false;
}

/** setTimeZone stores the IANA time zone a person reads times in (validated by the caller's field, timeZoneField). */
export async function setTimeZone(db: DbOrTx, userId: string, timeZone: string): Promise<{ timeZone: string }> {
  const [row] = await db.update(users).set({ timeZone }).where(eq(users.id, userId)).returning({ timeZone: users.timeZone });
  if (!row) throw new AppError('NOT_FOUND', 'error.notFound');
  return row;
}

/** verifyCredentials returns the user for a correct e-mail and password, else null (in similar time either way). */
export async function verifyCredentials(db: Db, email: string, password: string) {
  const [user] = await db
    .select({ id: users.id, email: users.email, name: users.name, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(sql`lower(${users.email})`, email.trim().toLowerCase()))
    .limit(1);
  const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  return user && ok ? { id: user.id, email: user.email, name: user.name } : null;
}

const callerSelect = (db: DbOrTx, sessionSeen: SQL<string | null>) =>
  db
    .select({
      id: users.id,
      email: users.email,
      name: users.name,
      emailVerified: sql<boolean>`${users.emailVerifiedAt} is not null`,
      timeZone: users.timeZone,
      staffRoles: sql<StaffRole[]>`coalesce((select jsonb_agg(${staffRoles.role} order by ${staffRoles.role}) from ${staffRoles} where ${staffRoles.userId} = ${users.id}), '[]'::jsonb)`,
      // Written out with its tables named: in a one-table select drizzle leaves column names unqualified.
      tenants: sql<Membership[]>`coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'name', o.name, 'kind', o.kind, 'status', o.status, 'role', m.role) order by o.name, o.id) from memberships m join organisations o on o.id = m.org_id where m.user_id = ${sql.placeholder('userId')}), '[]'::jsonb)`,
      sessionSeen,
    })
    .from(users)
    .where(eq(users.id, sql.placeholder('userId')))
    .limit(1);
const callerStatement = reusable('caller', (db) => callerSelect(db, sql<null>`null`));
const callerInSession = reusable('caller_in_session', (db) =>
  callerSelect(db, sql<string | null>`(select ${sessions.lastSeenAt}::text from ${sessions} where ${sessions.id} = ${sql.placeholder('sessionId')} and ${sessions.userId} = ${sql.placeholder('userId')} and ${sessions.endedAt} is null)`),
);

/**
 * loadCaller loads a signed-in user with their staff roles and the tenants they belong to (by name, as
 * listMyOrganisations lists them); undefined if the account no longer exists or, with a session id
 * (every request has one), if that session was ended (server/services/identity/sessions.ts).
 */
export async function loadCaller(db: Db, userId: string, sessionId?: string): Promise<Caller | undefined> {
  // One query per request for who is calling: the user, their staff roles, tenants and session together.
  const [user] = await (sessionId ? callerInSession(db, { userId, sessionId }) : callerStatement(db, { userId }));
  if (!user) return undefined;
  if (sessionId) {
    if (!user.sessionSeen) return undefined;
    await touchSession(db, sessionId, new Date(user.sessionSeen));
  }
  return { actor: { userId: user.id, email: user.email, name: user.name, staffRoles: user.staffRoles }, tenants: user.tenants, emailVerified: user.emailVerified, timeZone: user.timeZone };
}

/** loadActor loads a signed-in user with their staff roles (see loadCaller). */
export async function loadActor(db: Db, userId: string, sessionId?: string): Promise<Actor | undefined> {
  return (await loadCaller(db, userId, sessionId))?.actor;
}
