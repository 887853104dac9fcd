// Field schemas shared by the routers: one definition of what a valid e-mail, password or name is.
import { z } from 'zod';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '~/server/auth/password';
import { isKnownCountry } from '~/server/core/countries';

export const emailField = z.string().trim().toLowerCase().min(1).max(254).pipe(z.email());
export const passwordField = z.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH);
export const personNameField = z.string().trim().min(1).max(120);
export const orgNameField = z.string().trim().min(2).max(120);
export const countryField = z
  .string()
  .trim()
  .toUpperCase()
  .refine(isKnownCountry, { message: 'validation.country' });
export const reasonField = z.string().trim().min(3).max(1000);
export const uuidField = z.uuid();
export const memberRoleField = z.enum(['owner', 'manager', 'member']);
export const orgKindField = z.enum(['academic', 'company']);
export const residencyField = z.enum(['any', 'EU', 'DE']);
export const invitationTokenField = z.string().trim().min(20).max(100).regex(/^[A-Za-z0-9_-]+$/);
export const dayField = z.iso.date();
export const gpuHoursField = z.number().int().min(1).max(10_000_000);
export const resourceClassIdField = z.string().trim().min(1).max(40);
export const commentField = z.string().trim().max(5000);
