// Who is acting: resolved once by the tRPC procedure builders and passed to every service.
import type { MemberRole, OrgKind, OrgStatus, StaffRole } from '~/db/schema';

export interface Actor {
  userId: string;
  email: string;
  name: string;
  staffRoles: StaffRole[];
}

export interface TenantRef {
  id: string;
  name: string;
  kind: OrgKind;
  status: OrgStatus;
}

/** A tenant someone belongs to, with their role in it. */
export interface Membership extends TenantRef {
  role: MemberRole;
}

/** Who is calling, as a request loads it once: the person, and the tenants they belong to by name. */
export interface Caller {
  actor: Actor;
  tenants: Membership[];
  /** Whether the person proved their address (until then their tenant mutations are refused). */
  emailVerified: boolean;
  /** The IANA time zone the person reads times in (their profile; default Europe/Berlin). */
  timeZone: string;
}

export interface TenantActor extends Actor {
  org: TenantRef;
  role: MemberRole;
}

/** isStaff tells whether an actor holds any staff role (or a given one). */
export function isStaff(actor: Actor, role?: StaffRole): boolean {
  return role ? actor.staffRoles.includes(role) : actor.staffRoles.length > 0;
}
