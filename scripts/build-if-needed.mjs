// Builds the Next.js app when no build exists or a source is newer than the last build.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
export const nextBin = path.join(root, 'node_modules', 'next', 'dist', 'bin', 'next');
const SOURCES = ['app', 'server', 'db', 'drizzle', 'instrumentation.ts', 'proxy.ts', 'next.config.js', 'package.json', 'postcss.config.mjs', 'tsconfig.json'];
const SKIP = new Set(['node_modules', '.next']);

function newestMtime(full) {
  if (!fs.existsSync(full)) return 0;
  const stat = fs.statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of fs.readdirSync(full)) if (!SKIP.has(child)) newest = Math.max(newest, newestMtime(path.join(full, child)));
  return newest;
}

/** buildIsCurrent tells whether .next holds a build newer than every source. */
export function buildIsCurrent() {
  const buildId = path.join(root, '.next', 'BUILD_ID');
  if (!fs.existsSync(buildId)) return false;
  const built = fs.statSync(buildId).mtimeMs;
  return SOURCES.every((entry) => newestMtime(path.join(root, entry)) <= built);
}

/** buildIfNeeded runs `next build` when needed; returns true on success. */
export function buildIfNeeded() {
  if (buildIsCurrent()) return true;
  console.log('[portal] building the web app (first start or changed sources; about a minute)…');
  const result = spawnSync(process.execPath, [nextBin, 'build'], { cwd: root, stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
  return result.status === 0;
}
