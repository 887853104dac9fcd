#!/usr/bin/env node
// Serves the built portal for the browser tests on a fresh embedded database (demo centre seeded),
// sending its mail to the test SMTP sink (scripts/test-smtp-sink.mjs, started beside it by playwright.config.ts).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const port = process.argv[2] ?? '3100';
// One database folder per port: the shards of `npm test` run side by side.
const dataDir = path.join(root, port === '3100' ? '.data-e2e' : `.data-e2e-${port}`);
const smtpPort = process.env.TEST_SMTP_PORT ?? '2526';
fs.rmSync(dataDir, { recursive: true, force: true });
// Single sign-on through the test OpenID Provider that playwright.config.ts starts beside the portal.
const oidcProviders =
  process.env.OIDC_PROVIDERS ??
  JSON.stringify([{ id: 'test-idp', name: 'Test IdP', issuer: `http://127.0.0.1:${process.env.TEST_OIDC_PORT ?? '3901'}`, clientId: 'portal-e2e', clientSecret: 'portal-e2e-secret' }]);
// The portal's own server (Next.js with the sessions' proxy in front), as `npm start` runs it.
const server = spawn(process.execPath, [path.join(root, 'scripts/server.mjs'), '-p', port, '-H', '127.0.0.1'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    PORTAL_DATA_DIR: dataDir,
    PORTAL_ENV: 'demo',
    DATABASE_URL: '',
    SIM_SPEED: process.env.E2E_SIM_SPEED ?? '600',
    SIM_NODE_MTBF_HOURS: '0',
    NEXT_TELEMETRY_DISABLED: '1',
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    MAIL_FROM: 'AI Factory Portal <portal@centre.example>',
    OIDC_PROVIDERS: oidcProviders,
  },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code) => process.exit(code ?? 0));
