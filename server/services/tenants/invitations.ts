// Invitations to join a tenant: created by owners and managers, accepted by the invited address.
// Only a hash of the token is stored. The invited address gets the link by mail (the outbox, written in
// the invitation's transaction); the inviter sees it once too, to pass on by hand when no mail goes out.
import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db, Tx } from '~/db/client';
import { invitations, memberships, organisations, users, type MemberRole } from '~/db/schema';
import { composeMail } from '~/server/services/mail/mail-compose';
import { checkInvite } from '~/server/core/roles';
import { formatDateTime } from '~/server/i18n/format';
import { translate, type Locale } from '~/server/i18n';
import { enqueueMail } from '~/server/services/mail/mail';
import { AppError } from '~/server/errors';
import type { Actor, TenantActor } from '~/server/services/actor';
import { inTransaction } from '~/server/services/transaction';
import { recordAudit } from '~/server/services/audit';
import { refusalError } from './organisations';
import { markEmailVerified } from '~/server/services/identity/email-verification';

export const INVITATION_DAYS = 14;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** How an invitation's mail is written: in the inviter's language, with links under the portal's address. */
export interface InvitationMail {
  locale: Locale;
  /** The portal's address, e.g. https://portal.example.org (links in mails must be absolute). */
  baseUrl: string;
}

/**
 * createInvitation invites an e-mail address into the actor's tenant with a role, writes the mail with
 * the link to the address, and returns the one-time token.
 */
export async function createInvitation(db: Db, actor: TenantActor, input: { email: string; role: MemberRole }, mail: InvitationMail) {
  const refusal = checkInvite(actor.role, input.role);
  if (refusal) throw refusalError(refusal, actor, 'role');
  const token = randomBytes(24).toString('base64url');
  const expiresAt = new Date(Date.now() + INVITATION_DAYS * 86_400_000);
  return inTransaction(db, async (tx) => {
    const [existing] = await tx
      .select({ userId: memberships.userId })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.orgId, actor.org.id), eq(sql`lower(${users.email})`, input.email)))
      .limit(1);
    if (existing) throw new AppError('CONFLICT', 'error.alreadyMember', { email: input.email }, 'email');
    const [invitation] = await tx
      .insert(invitations)
      .values({ orgId: actor.org.id, email: input.email, role: input.role, tokenHash: hashToken(token), invitedBy: actor.userId, expiresAt })
      .returning({ id: invitations.id, email: invitations.email, role: invitations.role, expiresAt: invitations.expiresAt });
    if (!invitation) throw new Error('invitation insert returned nothing');
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: actor.org.id,
      action: 'member.invited',
      targetType: 'invitation',
      targetId: invitation.id,
      data: { email: input.email, role: input.role },
    });
    const params = { inviter: actor.name, inviterEmail: actor.email, org: actor.org.name, role: translate(mail.locale, `role.${input.role}`), expires: formatDateTime(mail.locale, expiresAt) };
    const composed = composeMail(mail.locale, {
      subject: ['mail.invitation.subject', params],
      paragraphs: [['mail.invitation.greeting'], ['mail.invitation.body', params], ['mail.invitation.expiry', params]],
      action: { label: ['mail.invitation.action'], url: `${mail.baseUrl.replace(/\/$/, '')}/invitations/${token}` },
    });
    await enqueueMail(tx, [{ kind: 'invitation', orgId: actor.org.id, toAddress: input.email, locale: mail.locale, ...composed }]);
    return { ...invitation, token };
  });
}

/** listOpenInvitations lists a tenant's invitations that are neither accepted, revoked nor expired. */
export async function listOpenInvitations(db: Db, orgId: string) {
  return db
    .select({ id: invitations.id, email: invitations.email, role: invitations.role, expiresAt: invitations.expiresAt, createdAt: invitations.createdAt })
    .from(invitations)
    .where(
      and(eq(invitations.orgId, orgId), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, new Date())),
    )
    .orderBy(desc(invitations.createdAt));
}

/** revokeInvitation withdraws an open invitation of the actor's tenant. */
export async function revokeInvitation(db: Db, actor: TenantActor, invitationId: string): Promise<void> {
  await inTransaction(db, async (tx) => {
    const [row] = await tx
      .update(invitations)
      .set({ revokedAt: new Date() })
      .where(and(eq(invitations.id, invitationId), eq(invitations.orgId, actor.org.id), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)))
      .returning({ id: invitations.id, email: invitations.email });
    if (!row) throw new AppError('NOT_FOUND', 'error.notFound');
    await recordAudit(tx, {
      actorUserId: actor.userId,
      orgId: actor.org.id,
      action: 'invitation.revoked',
      targetType: 'invitation',
      targetId: row.id,
      data: { email: row.email },
    });
  });
}

async function findInvitation(db: Db | Tx, token: string, forUpdate: boolean) {
  const query = db
    .select({
      id: invitations.id,
      orgId: invitations.orgId,
      email: invitations.email,
      role: invitations.role,
      expiresAt: invitations.expiresAt,
      acceptedAt: invitations.acceptedAt,
      revokedAt: invitations.revokedAt,
      orgName: organisations.name,
      inviterName: users.name,
    })
    .from(invitations)
    .innerJoin(organisations, eq(organisations.id, invitations.orgId))
    .innerJoin(users, eq(users.id, invitations.invitedBy))
    .where(eq(invitations.tokenHash, hashToken(token)))
    .limit(1);
  const [row] = forUpdate ? await query.for('update', { of: invitations }) : await query;
  if (!row || row.acceptedAt || row.revokedAt) throw new AppError('NOT_FOUND', 'error.invitationInvalid');
  if (row.expiresAt.getTime() < Date.now()) {
    throw new AppError('PRECONDITION_FAILED', 'error.invitationExpired', { date: row.expiresAt.toISOString().slice(0, 10) });
  }
  return row;
}

/** previewInvitation shows what an invitation offers, for the accept page; refuses used, revoked or expired ones. */
export async function previewInvitation(db: Db, token: string) {
  const row = await findInvitation(db, token, false);
  return { orgName: row.orgName, inviterName: row.inviterName, email: row.email, role: row.role, expiresAt: row.expiresAt };
}

/** acceptInvitationInTx makes the actor a member, inside a caller's transaction; the address must match. */
export async function acceptInvitationInTx(tx: Tx, actor: Actor, token: string): Promise<{ orgId: string; orgName: string }> {
  const row = await findInvitation(tx, token, true);
  if (row.email !== actor.email.toLowerCase()) {
    throw new AppError('FORBIDDEN', 'error.invitationOtherEmail', { email: row.email });
  }
  const inserted = await tx
    .insert(memberships)
    .values({ orgId: row.orgId, userId: actor.userId, role: row.role })
    .onConflictDoNothing()
    .returning({ orgId: memberships.orgId });
  if (inserted.length === 0) throw new AppError('CONFLICT', 'error.alreadyMember', { email: row.email });
  await tx.update(invitations).set({ acceptedAt: new Date(), acceptedBy: actor.userId }).where(eq(invitations.id, row.id));
  // The invitation was mailed to this address and its link opened by its owner: the address is theirs.
  await markEmailVerified(tx, actor.userId, new Date());
  await recordAudit(tx, {
    actorUserId: actor.userId,
    orgId: row.orgId,
    action: 'member.joined',
    targetType: 'membership',
    targetId: actor.userId,
    data: { role: row.role, invitationId: row.id },
  });
  return { orgId: row.orgId, orgName: row.orgName };
}

/** acceptInvitation makes the signed-in actor a member of the inviting tenant. */
export async function acceptInvitation(db: Db, actor: Actor, token: string) {
  return db.transaction((tx) => acceptInvitationInTx(tx, actor, token));
}
