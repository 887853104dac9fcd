// Translation in server components: the caller's locale, time zone and a bound t().
import { requestLocale } from '~/server/api/context';
import { translate, type MessageKey, type MessageParams } from '~/server/i18n';
import { DEFAULT_TIME_ZONE } from '~/server/i18n/format';
import { currentUser } from './session';

/** getT returns the request's locale, the signed-in person's time zone (else the default) and a translate function bound to the locale. */
export async function getT() {
  const [locale, me] = await Promise.all([requestLocale(), currentUser()]);
  return { locale, timeZone: me?.timeZone ?? DEFAULT_TIME_ZONE, t: (key: MessageKey, params?: MessageParams) => translate(locale, key, params) };
}
