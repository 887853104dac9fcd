// The Postgres driver survives a server that goes away under a transaction (patches/postgres+3.4.9.patch,
// porsager/postgres#1208). Unpatched, postgres.js 3.4.9 buffers the transaction's own ROLLBACK for the next
// tick and then writes it to the closed socket: a TypeError from a setImmediate callback that no caller can
// catch, which ended the worker in the middle of a Postgres fail-over (e2e/failover.spec.ts). Run in a child
// process, so that a crash is an exit code here and not an error inside the test runner.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const url = process.env.TEST_DATABASE_URL;
const root = path.resolve(import.meta.dirname, '..');

// One connection (so the query afterwards must reconnect the same connection), and one for the killer.
// The backend is terminated while a query is in flight: inside a transaction, or alone.
const script = (inTransaction: boolean) => `
import postgres from 'postgres';
const url = process.env.URL;
const sql = postgres(url, { max: 1, onnotice() {} });
const killer = postgres(url, { max: 1, onnotice() {} });
let pid = null;
const work = ${inTransaction}
  ? sql.begin(async (t) => {
      pid = (await t\`select pg_backend_pid() as pid\`)[0].pid;
      await t\`select pg_sleep(5)\`;
    })
  : sql\`select pg_backend_pid() as pid\`.then(([row]) => { pid = row.pid; return sql\`select pg_sleep(5)\`; });
while (pid === null) await new Promise((resolve) => setTimeout(resolve, 20));
await new Promise((resolve) => setTimeout(resolve, 100));
await killer\`select pg_terminate_backend(\${pid})\`;
const failure = await work.then(() => 'finished', (error) => error.code ?? String(error));
console.log('in flight: ' + failure);
await new Promise((resolve) => setTimeout(resolve, 200));
const [row] = await sql\`select pg_backend_pid() <> \${pid} as fresh, 41 + 1 as answer\`;
console.log('afterwards: ' + row.answer + ' on a ' + (row.fresh ? 'new' : 'dead') + ' backend');
await Promise.all([sql.end({ timeout: 1 }), killer.end({ timeout: 1 })]);
`;

function run(inTransaction: boolean) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', script(inTransaction)], {
    cwd: root,
    env: { ...process.env, URL: url },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe.runIf(url)('the postgres driver when the server goes away', () => {
  // Unpatched: the process ends with "TypeError: Cannot read properties of null (reading 'write')".
  it('rejects a transaction as CONNECTION_CLOSED, keeps the process alive and reconnects', () => {
    const child = run(true);
    expect(child.stderr).not.toMatch(/TypeError/);
    expect(child.stdout).toContain('in flight: CONNECTION_CLOSED');
    expect(child.stdout).toContain('afterwards: 42 on a new backend');
    expect(child.status).toBe(0);
  });

  // Unpatched: the reconnected connection answers its first query with the dead one's 57P01 error.
  it('answers the next query on the reconnected connection, not with the closed one’s last error', () => {
    const child = run(false);
    expect(child.stdout).toContain('in flight: CONNECTION_CLOSED');
    expect(child.stderr).not.toMatch(/57P01|terminating connection/);
    expect(child.stdout).toContain('afterwards: 42 on a new backend');
    expect(child.status).toBe(0);
  });
});
