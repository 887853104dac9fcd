// Each test file's project workspaces (PORTAL_FILES_DIR, server/services/files/roots.ts) in a scratch
// folder of its own, removed after the file. One folder shared by every file let one file's worker
// clear another's uploads: scheduler-budgets.integration.test.ts runs the worker at 2027-01-01, and its
// sweep (sweepUploads) removes every staged upload whose files are a week older than that — all of them,
// the uploads a file beside it (uploads-http.integration.test.ts) was in the middle of; that upload then
// answered 404. A run of the tests in another checkout on the same machine shared the folder too.
// vitest.config.ts runs this before every test file; each file has its own process (vitest isolates
// files), so the portal's environment (server/env.js, read once) sees this file's folder.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

// Not made here: the portal makes its folders as it needs them (a file that skips its tests leaves none).
const dir = path.join(os.tmpdir(), `portal-test-files-${randomUUID()}`);
process.env.PORTAL_FILES_DIR = dir;

afterAll(() => {
  // Last of the file's hooks (vitest runs `afterAll` in reverse order of registration): nothing of it writes there after.
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});
