// Translation in server components: the caller's locale and a bound t().
import { requestLocale } from '~/server/api/context';
import { translate, type MessageKey, type MessageParams } from '~/server/i18n';

/** getT returns the request's locale and a translate function bound to it. */
export async function getT() {
  const locale = await requestLocale();
  return { locale, t: (key: MessageKey, params?: MessageParams) => translate(locale, key, params) };
}
