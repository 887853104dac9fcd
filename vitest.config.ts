import path from 'node:path';
import { defineConfig } from 'vitest/config';

// Test tiers by file suffix: *.test.ts (unit, pure) and *.integration.test.ts (routers on a real database).
export default defineConfig({
  resolve: { alias: { '~': path.resolve(import.meta.dirname) } },
  test: {
    // Project workspaces (server/services/files) of tests: a scratch folder of each test file's own
    // (PORTAL_FILES_DIR), not the repository's .data — nor another file's, whose worker's sweep would clear its uploads.
    setupFiles: ['./server/testing/files-dir.ts'],
    // Each integration file opens its own databases; two files at a time fit a 2-core machine.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['server/**/*.test.ts', 'db/**/*.test.ts', 'scripts/**/*.test.ts', 'bin/**/*.test.ts'],
          exclude: ['**/*.integration.test.ts', '**/*.slurm.test.ts', 'node_modules/**'],
          environment: 'node',
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['**/*.integration.test.ts'],
          exclude: ['node_modules/**', '.next/**', '.slurm-test/**'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          // Against a real Slurm (scripts/slurm-test-cluster.sh): one file at a time, in real time — the
          // files share the cluster's partition, and some stop its daemons on purpose.
          name: 'slurm',
          include: ['**/*.slurm.test.ts'],
          // Configured as a centre on Slurm is: workspaces on the cluster's filesystem (SLURM_JOB_DIR), their
          // group the one jobs run in (server/services/files/roots.ts).
          env: { SCHEDULER: 'slurm' },
          exclude: ['node_modules/**', '.next/**', '.slurm-test/**'],
          environment: 'node',
          fileParallelism: false,
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
