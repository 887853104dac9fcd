// How the mails about a person's own account are written (password reset, address check): in their
// language — the one they chose, else the one of the request that caused the mail — with links under
// the portal's address.
import type { Locale } from '~/server/i18n';
import { isLocale } from '~/server/i18n';
import { linkBase } from '~/server/portal-url';

export interface AccountMail {
  /** The request's language, for a person who has not chosen one. */
  locale: Locale;
  /** The portal's address, e.g. https://portal.example.org (links in mails must be absolute). */
  baseUrl: string;
}

/** defaultAccountMail is for callers without a request (the demo seed, scripts): English, the configured address. */
export function defaultAccountMail(): AccountMail {
  return { locale: 'en', baseUrl: linkBase() };
}

/** readerLocale is the language a mail to a person is written in: theirs if they chose one, else the request's. */
export function readerLocale(chosen: string | null | undefined, mail: AccountMail): Locale {
  return isLocale(chosen) ? chosen : mail.locale;
}

/** accountLink is an absolute link to a page of the portal. */
export function accountLink(mail: AccountMail, path: string): string {
  return `${mail.baseUrl.replace(/\/$/, '')}${path}`;
}
