#!/usr/bin/env node
// `npm start`: build the portal when the build is missing or older than the sources, then serve it.
// The server process (scripts/server.mjs: Next.js with the sessions' proxy in front) owns the database;
// this wrapper only forwards signals.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { buildIfNeeded } from './build-if-needed.mjs';

if (!buildIfNeeded()) process.exit(1);
const port = process.env.PORT ?? '3000';
const server = spawn(process.execPath, [path.join(import.meta.dirname, 'server.mjs'), '-p', port], {
  cwd: path.resolve(import.meta.dirname, '..'),
  stdio: 'inherit',
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
