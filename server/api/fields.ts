// Field schemas shared by the routers: one definition of what a valid e-mail, password or name is.
import { z } from 'zod';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '~/server/auth/password';
import { isKnownCountry } from '~/server/core/countries';
import { isTimeZoneName, timeZoneNames } from '~/server/i18n/format';

// One rule for free text (every name, title, reason, comment, script): Unicode NFC, trimmed, and no
// NUL or other control characters, which Postgres refuses (NUL) or which hide what a text says (bidi
// overrides, "Trojan Source"). Multi-line fields keep line breaks and tabs.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL_MULTILINE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/;

/** textField is a free-text field of min..max characters (after normalising and trimming). */
export function textField(min: number, max: number, options: { multiline?: boolean } = {}) {
  const forbidden = options.multiline ? CONTROL_MULTILINE : CONTROL;
  return z
    .string()
    .normalize('NFC')
    .trim()
    .min(min)
    .max(max)
    .refine((value) => !forbidden.test(value), { message: options.multiline ? 'validation.controlCharactersMultiline' : 'validation.controlCharacters' });
}

export const emailField = z.string().trim().toLowerCase().min(1).max(254).pipe(z.email());
export const passwordField = z.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH);
export const personNameField = textField(1, 120);
/** An IANA time zone a person reads times in (server/i18n/format.ts isTimeZoneName), stored as the runtime names it. */
export const timeZoneField = z
  .string()
  .trim()
  .max(64, 'profile.timeZoneUnknown')
  .refine(isTimeZoneName, 'profile.timeZoneUnknown')
  .transform((zone) => (timeZoneNames().includes(zone) ? zone : new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone));
export const orgNameField = textField(2, 120);
export const countryField = z
  .string()
  .trim()
  .toUpperCase()
  .refine(isKnownCountry, { message: 'validation.country' });
export const reasonField = textField(3, 1000, { multiline: true });
export const uuidField = z.uuid();
export const memberRoleField = z.enum(['owner', 'manager', 'member']);
export const orgKindField = z.enum(['academic', 'company']);
export const residencyField = z.enum(['any', 'EU', 'DE']);
export const invitationTokenField = z.string().trim().min(20).max(100).regex(/^[A-Za-z0-9_-]+$/);
/** A mailed link's token; its exact shape is checked where it is looked up, so a mangled one reads as unknown. */
export const authTokenField = z.string().trim().min(1).max(200);
export const dayField = z.iso.date();
export const gpuHoursField = z.number().int().min(1).max(10_000_000);
/** Storage in whole GB (10^9 bytes), as a line asks for it or a reviewer grants it (up to 100 PB). */
export const storageGbField = z.number().int().min(0).max(100_000_000);
/** A catalogue id (resource class, access mode): letters, digits, dot, dash, underscore. */
export const catalogueIdField = z.string().trim().min(1).max(40).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'validation.catalogueId');
export const resourceClassIdField = catalogueIdField;
/** A client's idempotency key: printable ASCII without spaces (a UUID is typical). */
export const idempotencyKeyField = z.string().min(8).max(100).regex(/^[\x21-\x7E]+$/, 'validation.idempotencyKey');
export const commentField = textField(0, 5000, { multiline: true });

/**
 * A monthly cap staff decide with a credit line, in euros: null for no cap, absent to leave it as it is.
 * Whole euros from 0 are checked by the service (server/services/billing/credit-line-cap.ts), which names the
 * field and says the fix; here only that it is a number.
 */
export const capEurosField = z.number().nullable().optional();
