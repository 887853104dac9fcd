// The codes sign-in reports (`?error=` after a redirect, or signIn()'s `error`) as the messages the
// person reads. The codes are server/auth/options.ts SIGN_IN_ERRORS and next-auth's own.
import type { MessageKey, MessageParams } from '~/server/i18n/core';

/** signInErrorMessage turns a sign-in error code into a message key and its parameters; null for none. */
export function signInErrorMessage(code: string | null | undefined): [MessageKey, MessageParams?] | null {
  if (!code) return null;
  const locked = /^RateLimited:(\d+)$/.exec(code);
  if (locked) return ['signIn.lockedOut', { minutes: Math.max(1, Math.ceil(Number(locked[1]) / 60)) }];
  const sso = /^SsoRequired:(.+)$/s.exec(code);
  if (sso) return ['signIn.ssoRequired', { org: sso[1]! }];
  switch (code) {
    case 'SsoNoEmail':
      return ['signIn.ssoNoEmail'];
    case 'LinkExpired':
      return ['signIn.linkExpired'];
    case 'WrongPassword':
      return ['link.wrongPassword'];
    case 'CredentialsSignin':
      return ['signIn.wrongCredentials'];
    // next-auth's own: the provider refused, the callback failed its checks, or the sign-in was turned down.
    case 'SsoFailed':
    case 'OAuthSignin':
    case 'OAuthCallback':
    case 'OAuthAccountNotLinked':
    case 'Callback':
    case 'AccessDenied':
    case 'Configuration':
      return ['signIn.ssoFailed'];
    default:
      return ['signIn.wrongCredentials'];
  }
}
