// The session proxy in front of the real app (issue #28): Debian's Jupyter Notebook 6.4, started as the
// launcher starts it (its token in JUPYTER_TOKEN, served under /sessions/<job id>/), reached through the
// proxy by its owner: the notebook page with its token masked, a kernel started through the API, and
// code run in it over the proxied WebSocket. Skipped where /usr/bin/jupyter-notebook is not installed.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { encode } from 'next-auth/jwt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { DbHandle } from '~/db/client';
import { jobs } from '~/db/schema';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { SESSION_FOLDER } from '~/server/core/files/paths';
import { jobDirOf, workspaceOf } from '~/server/services/files/workspace';
import { startSession } from '~/server/services/identity/sessions';
import { createSessionActivity, type SessionActivity } from '~/server/services/sessions/activity';
import { sessionAccess } from '~/server/services/sessions/proxy-access';
import { activeAllocation, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { createSessionProxy, type SessionProxy } from './sessions-http';

const JUPYTER = '/usr/bin/jupyter-notebook';
const AUTH_SECRET = randomBytes(32).toString('base64url');

/** freePort finds a port nothing listens on (as the launcher does). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe.skipIf(!existsSync(JUPYTER)).each(dbTargets())('the session proxy in front of Jupyter Notebook on %s', (target) => {
  let handle: DbHandle;
  let jupyter: ChildProcess | undefined;
  let proxy: SessionProxy;
  let activity: SessionActivity;
  let portal: http.Server;
  let base: string;
  let jobId: string;
  let token: string;
  let cookie: string;

  beforeAll(async () => {
    handle = await openTestDb(target);
    const db = handle.db;
    const admin = await createStaff(db, 'admin');
    const owner = await createTenant(db);
    const { projectId, allocationId } = await activeAllocation(db, owner, admin, { gpuHours: 100, today: '2026-12-01' });
    jobId = randomUUID();
    await db.insert(jobs).values({
      id: jobId, orgId: owner.orgId, projectId, allocationId, userId: owner.userId, idempotencyKey: randomUUID(), name: 'notebook', kind: 'interactive', resourceClassId: 'h100', siteId: 'de-jena',
      gpus: 1, nodes: 1, walltimeSeconds: 3600, image: 'jupyter', command: 'portal-session jupyter', env: {}, state: 'RUNNING', reservedAmount: 3600, reservedUnit: 'gpu_seconds', centsPerGpuHour: 180,
      startedAt: new Date(), nodeList: ['node-a'], app: 'jupyter', idleTimeoutSeconds: 1800,
    });
    const dir = path.join(jobDirOf(workspaceOf(configuredSiteRoots(), 'de-jena', projectId), jobId), SESSION_FOLDER);
    await mkdir(dir, { recursive: true });
    // As bin/portal-session starts it: bound to the node, its token from the environment, under the base path.
    const port = await freePort();
    token = randomBytes(32).toString('base64url');
    jupyter = spawn(JUPYTER, ['--no-browser', '--ip=127.0.0.1', `--port=${port}`, '--port-retries=0', `--NotebookApp.base_url=/sessions/${jobId}/`, `--notebook-dir=${dir}`, '--NotebookApp.allow_remote_access=True', ...(process.getuid?.() === 0 ? ['--allow-root'] : [])], {
      env: { PATH: '/usr/bin:/bin', HOME: dir, JUPYTER_TOKEN: token, JUPYTER_RUNTIME_DIR: path.join(dir, '.runtime') } as unknown as NodeJS.ProcessEnv,
      stdio: 'ignore',
      detached: true,
    });
    for (let i = 0; i < 150 && !(await answers(port)); i++) await new Promise((r) => setTimeout(r, 200));
    await writeFile(path.join(dir, 'connection.json'), JSON.stringify({ host: 'node-a', port, secret: token, basePath: `/sessions/${jobId}/` }), { mode: 0o600 });
    activity = createSessionActivity({ db });
    proxy = createSessionProxy({
      access: (request) => sessionAccess({ db, authSecret: AUTH_SECRET, scheduler: () => Promise.resolve({ sessionAddress: () => Promise.resolve('127.0.0.1') }), roots: configuredSiteRoots() }, request),
      touch: (id) => activity.touch(id),
      trustProxy: false,
    });
    portal = http.createServer((req, res) => proxy.handleRequest(req, res));
    portal.on('upgrade', (req, socket, head) => proxy.handleUpgrade(req, socket, head));
    await new Promise<void>((resolve) => portal.listen(0, '127.0.0.1', resolve));
    base = `127.0.0.1:${(portal.address() as AddressInfo).port}`;
    const sid = await startSession(db, owner.userId, {});
    cookie = `next-auth.session-token=${await encode({ token: { sub: owner.userId, sid }, secret: AUTH_SECRET })}; portal-org=${owner.orgId}`;
  });

  afterAll(async () => {
    await proxy?.close();
    await activity?.stop();
    portal?.closeAllConnections();
    await new Promise<void>((resolve) => (portal ? portal.close(() => resolve()) : resolve()));
    // The notebook server leads its own process group: its kernels stop with it.
    if (jupyter?.pid) process.kill(-jupyter.pid, 'SIGTERM');
    await handle?.close();
  });

  /** call sends a request as the notebook's own page does (the session's cookie, the portal's origin). */
  async function call(method: string, where: string, body?: unknown): Promise<{ status: number; text: string; headers: Headers }> {
    const response = await fetch(`http://${base}/sessions/${jobId}/${where}`, { method, redirect: 'manual', headers: { cookie, origin: `http://${base}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    expect(text.includes(token) || JSON.stringify([...response.headers]).includes(token), `${method} ${where} carried the token`).toBe(false);
    return { status: response.status, text, headers: response.headers };
  }

  it('serves the notebook page with its token masked and Jupyter’s own policy', async () => {
    const tree = await call('GET', 'tree');
    expect(tree.status).toBe(200);
    expect(tree.text).toMatch(/data-jupyter-api-token="\*{43}"/);
    expect(tree.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
  });

  it('starts a kernel through the API and runs code in it over the proxied WebSocket', async () => {
    const notebook = await call('POST', 'api/contents', { type: 'notebook' });
    expect(notebook.status).toBe(201);
    const kernel = await call('POST', 'api/kernels', { name: 'python3' });
    expect(kernel.status).toBe(201);
    const { id } = JSON.parse(kernel.text) as { id: string };
    const socket = new WebSocket(`ws://${base}/sessions/${jobId}/api/kernels/${id}/channels?session_id=test`, { headers: { cookie, origin: `http://${base}` } });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_req, res) => reject(new Error(`the WebSocket was refused: ${res.statusCode}`)));
      socket.once('error', reject);
    });
    const msgId = randomUUID();
    const result = new Promise<string>((resolve) =>
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString('utf8')) as { msg_type: string; parent_header: { msg_id?: string }; content: { data?: Record<string, string> } };
        if (message.msg_type === 'execute_result' && message.parent_header.msg_id === msgId) resolve(message.content.data!['text/plain']!);
      }),
    );
    socket.send(JSON.stringify({ header: { msg_id: msgId, msg_type: 'execute_request', username: 'test', session: 'test', version: '5.3', date: new Date().toISOString() }, parent_header: {}, metadata: {}, content: { code: '6 * 7', silent: false, store_history: true, user_expressions: {}, allow_stdin: false }, buffers: [], channel: 'shell' }));
    expect(await result).toBe('42');
    socket.close();
    await call('DELETE', `api/kernels/${id}`);
  });
});
