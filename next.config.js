// @ts-check
import { parseEnv, ConfigError } from './server/env.js';

// Validate configuration at build and start: a bad value stops here, naming the variable.
try {
  parseEnv(process.env);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`\n${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

/** @type {import('next').NextConfig} */
const config = {
  reactStrictMode: true,
  poweredByHeader: false,
  // pdfkit reads its font metrics (AFM) from its own folder at run time. trpc-to-openapi asks
  // `'coerce' in z` and bundling drops that export from zod's namespace, so the REST API would neither
  // coerce query parameters nor build its OpenAPI document (500); loaded by Node it sees all of zod.
  // @e-invoice-eu/core carries its schemas, a spreadsheet reader and an ICC profile for PDF/A: Node loads it as it is.
  // http-proxy-3 (the sessions' proxy, server/api/sessions-http.ts) loads its optional helpers at run time.
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'pdfkit', 'trpc-to-openapi', 'zod-openapi', '@e-invoice-eu/core', 'http-proxy-3'],
  experimental: { authInterrupts: true },
  typescript: { ignoreBuildErrors: true }, // `npm run typecheck` is the gate; the build stays fast
  outputFileTracingRoot: import.meta.dirname,
};

export default config;
