// The production build for the HTTP benchmarks: built when missing, started as `npm start` runs it (the
// portal's own server, scripts/server.mjs: Next.js with the sessions' proxy in front, one Node process)
// on a fresh data folder and a given database (demo mode, so the demo centre is seeded), and stopped.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildIsCurrent } from '../scripts/build-if-needed.mjs';

export interface PortalServer {
  base: string;
  /** The process id of the server (bench/files.ts and bench/sessions.ts sample its memory and CPU). */
  pid: number;
  /** Lines the server printed with "[trpc] … failed" or "[jobs]" (errors it logged), and a few samples. */
  logged: { errors: number; samples: string[] };
  /** The last lines the server printed. */
  tail: () => string;
  stop: () => Promise<void>;
}

/**
 * ensureBuild reuses the build in .next when it is newer than every source (as `npm start` does), and
 * runs `next build` otherwise or with `rebuild`; with `reuse` it takes whatever build there is.
 */
export function ensureBuild(root: string, o: { rebuild: boolean; reuse: boolean; webpack: boolean }, log: (line: string) => void): void {
  const built = existsSync(join(root, '.next', 'BUILD_ID'));
  if (built && o.reuse) {
    if (!buildIsCurrent()) log('WARNING: the build in .next is older than the sources (--no-build): it may not measure the current code');
    return;
  }
  if (built && !o.rebuild && buildIsCurrent()) {
    log('reusing the build in .next (it is newer than the sources; --rebuild to build again)');
    return;
  }
  log(`building the portal (\`next build${o.webpack ? ' --webpack' : ''}\`)…`);
  const args = [join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build', ...(o.webpack ? ['--webpack'] : [])];
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
  if (result.status !== 0) throw new Error('`next build` failed: see its output above (with node_modules linked from outside the project, Turbopack cannot build: try --webpack)');
}

async function waitForHealth(base: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(`${base}/api/health`);
      await response.body?.cancel();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the server did not answer ${base}/api/health with 200 within ${timeoutMs / 1000} s`);
}

/** startServer runs the portal's server on 127.0.0.1:port with the given database and data folder, and waits until it is healthy. */
export async function startServer(root: string, o: { port: number; databaseUrl: string; dataDir: string; env?: Record<string, string> }): Promise<PortalServer> {
  const base = `http://127.0.0.1:${o.port}`;
  // BENCH_CPU_PROFILE_DIR=<folder>: the server writes a CPU profile there when it stops (open it in Chrome's DevTools).
  const profile = process.env.BENCH_CPU_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profile, join(root, 'scripts', 'server.mjs'), '-p', String(o.port), '-H', '127.0.0.1'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DATABASE_URL: o.databaseUrl,
      PORTAL_DATA_DIR: o.dataDir,
      PORTAL_ENV: 'demo',
      DEMO_SEED: 'auto',
      PORTAL_URL: '',
      NEXTAUTH_SECRET: '',
      NODE_ENV: 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      ...o.env,
    },
  });
  const lines: string[] = [];
  const logged = { errors: 0, samples: [] as string[] };
  const take = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      lines.push(line);
      if (lines.length > 200) lines.shift();
      if (/\[trpc\] .* failed|\[jobs\]|\[worker\].*(fail|error)|Error:/.test(line)) {
        logged.errors++;
        if (logged.samples.length < 3) logged.samples.push(line.slice(0, 300));
      }
    }
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitForHealth(base, child, 180_000);
  } catch (error) {
    await stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- server output ---\n${lines.join('\n')}`, { cause: error });
  }
  return { base, pid: child.pid!, logged, tail: () => lines.slice(-40).join('\n'), stop };
}
