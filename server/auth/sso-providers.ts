// The identity providers people may sign in with, as pages and the API show them (no secrets).
import { env } from '~/server/env.js';

export interface SsoProviderRef {
  id: string;
  name: string;
}

/** ssoProviders lists the configured OIDC providers by id and display name, in configuration order. */
export function ssoProviders(): SsoProviderRef[] {
  return env().OIDC_PROVIDERS.map((p) => ({ id: p.id, name: p.name }));
}

/** ssoProviderName is a provider's display name; a provider since removed from the configuration shows its id. */
export function ssoProviderName(id: string): string {
  return ssoProviders().find((p) => p.id === id)?.name ?? id;
}
