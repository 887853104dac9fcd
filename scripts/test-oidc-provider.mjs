#!/usr/bin/env node
// A real OpenID Provider for the browser tests (the certified `oidc-provider` package): one
// confidential client that must use PKCE, two people with passwords, and a login page of its own that
// checks them. Nothing is kept on disk; a restart forgets every session.
//
//   node scripts/test-oidc-provider.mjs            # http://127.0.0.1:3901 (TEST_OIDC_PORT)
//
// The portal is told of it with OIDC_PROVIDERS (scripts/e2e-server.mjs does that for the e2e build):
//   [{"id":"test-idp","name":"Test IdP","issuer":"http://127.0.0.1:3901","clientId":"portal-e2e","clientSecret":"portal-e2e-secret"}]
import http from 'node:http';
import { URLSearchParams } from 'node:url';
import { timingSafeEqual } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.env.TEST_OIDC_PORT ?? 3901);
const portalPort = process.env.E2E_PORT ?? '3100';
const issuer = `http://127.0.0.1:${port}`;
export const TEST_OIDC_CLIENT = { id: 'portal-e2e', secret: 'portal-e2e-secret', providerId: 'test-idp' };

/** The people the provider knows; e2e/sso.spec.ts signs in as them. */
const PEOPLE = {
  newcomer: { password: 'idp-password-1', claims: { email: 'newcomer@idp.test', email_verified: true, name: 'Nora Newcomer', eduPersonEntitlement: [] } },
  linked: { password: 'idp-password-2', claims: { email: 'linked@idp.test', email_verified: true, name: 'Lina Linked', eduPersonEntitlement: ['urn:test:portal:unused'] } },
};

const redirectUris = (process.env.TEST_OIDC_REDIRECT_URIS ?? `http://127.0.0.1:${portalPort}/api/auth/callback/${TEST_OIDC_CLIENT.providerId}`).split(',');

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: TEST_OIDC_CLIENT.id,
      client_secret: TEST_OIDC_CLIENT.secret,
      redirect_uris: redirectUris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  // The portal must prove it started the sign-in it finishes (PKCE), confidential client or not.
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], entitlements: ['eduPersonEntitlement'] },
  cookies: { keys: ['test-idp-cookie-key-not-secret'] },
  async findAccount(_ctx, id) {
    const person = PEOPLE[/** @type {keyof typeof PEOPLE} */ (id)];
    if (!person) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...person.claims }) };
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // The portal is this provider's own application: what it asks for is granted without a consent page.
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile entitlements');
    await grant.save();
    return grant;
  },
});

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid, problem) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test IdP sign-in</title></head>
<body><main><h1>Test IdP</h1>
${problem ? `<p role="alert">${escape(problem)}</p>` : ''}
<form method="post" action="/interaction/${escape(uid)}/login">
<label>Username <input name="username" autocomplete="username" required autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Continue</button>
</form></main></body></html>`;
}

async function formOf(req) {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 10_000) break;
  }
  return new URLSearchParams(body);
}

function samePassword(given, expected) {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const handleProvider = provider.callback();

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? '/', issuer);
    const match = /^\/interaction\/([^/]+)(\/login)?$/.exec(url.pathname);
    if (!match) return handleProvider(req, res);
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== match[1]) throw new Error('interaction mismatch');
    res.setHeader('cache-control', 'no-store');
    if (req.method === 'GET') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      return res.end(loginPage(details.uid));
    }
    if (req.method === 'POST' && match[2]) {
      const form = await formOf(req);
      const username = form.get('username') ?? '';
      const person = Object.hasOwn(PEOPLE, username) ? PEOPLE[username] : undefined;
      if (!person || !samePassword(form.get('password') ?? '', person.password)) {
        res.statusCode = 401;
        res.setHeader('content-type', 'text/html; charset=utf-8');
        return res.end(loginPage(details.uid, 'Wrong username or password.'));
      }
      return provider.interactionFinished(req, res, { login: { accountId: username } }, { mergeWithLastSubmission: false });
    }
    res.statusCode = 405;
    res.end();
  } catch (error) {
    res.statusCode = 400;
    res.end(error instanceof Error ? error.message : 'bad request');
  }
});

server.listen(port, '127.0.0.1', () => console.log(`test OIDC provider on ${issuer} (client ${TEST_OIDC_CLIENT.id}, redirect ${redirectUris.join(', ')})`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
