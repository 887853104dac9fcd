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
  serverExternalPackages: ['@electric-sql/pglite', 'postgres', 'pdfkit'], // pdfkit reads its font metrics (AFM) from its own folder at run time
  experimental: { authInterrupts: true },
  typescript: { ignoreBuildErrors: true }, // `npm run typecheck` is the gate; the build stays fast
  outputFileTracingRoot: import.meta.dirname,
};

export default config;
