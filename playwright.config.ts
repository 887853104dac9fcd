import { defineConfig } from '@playwright/test';

const PORT = Number(process.env.E2E_PORT ?? 3100);
// The SMTP sink the portal sends its mail to (scripts/test-smtp-sink.mjs); journeys read it over HTTP.
const SMTP_PORT = Number(process.env.TEST_SMTP_PORT ?? 2526);
const SMTP_HTTP_PORT = Number(process.env.TEST_SMTP_HTTP_PORT ?? 3902);
process.env.TEST_SMTP_PORT = String(SMTP_PORT);
process.env.TEST_SMTP_HTTP_PORT = String(SMTP_HTTP_PORT);
// The test OpenID Provider the portal's "Sign in with Test IdP" goes to (scripts/test-oidc-provider.mjs).
const OIDC_PORT = Number(process.env.TEST_OIDC_PORT ?? 3901);

// Browser journeys against a production build on a fresh embedded database, in Debian's Chromium.
export default defineConfig({
  testDir: 'e2e',
  // Each shard of `npm test` keeps its traces apart (Playwright empties this folder when it starts).
  outputDir: process.env.E2E_OUTPUT_DIR ?? 'test-results',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [['list'], ['json']] : [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    locale: 'en-GB',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    },
  },
  webServer: [
    {
      command: 'node scripts/test-smtp-sink.mjs',
      url: `http://127.0.0.1:${SMTP_HTTP_PORT}/health`,
      timeout: 30_000,
      reuseExistingServer: false,
      stdout: 'pipe',
      stderr: 'pipe',
    },
    {
      command: 'node scripts/test-oidc-provider.mjs',
      url: `http://127.0.0.1:${OIDC_PORT}/.well-known/openid-configuration`,
      env: { TEST_OIDC_PORT: String(OIDC_PORT), E2E_PORT: String(PORT) },
      timeout: 30_000,
      reuseExistingServer: false,
      stdout: 'pipe',
      stderr: 'pipe',
    },
    {
      command: `node scripts/e2e-server.mjs ${PORT}`,
      url: `http://127.0.0.1:${PORT}/api/health`,
      env: { TEST_OIDC_PORT: String(OIDC_PORT) },
      timeout: 180_000,
      reuseExistingServer: false,
      stdout: 'pipe',
      stderr: 'pipe',
    },
  ],
});
