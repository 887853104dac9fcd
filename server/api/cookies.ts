// Names of the portal's own (non-secret) cookies, shared by the browser code and the server.
export const ORG_COOKIE = 'portal-org';
export { LOCALE_COOKIE } from '~/server/i18n';
