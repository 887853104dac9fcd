import { describe, expect, it } from 'vitest';
import { exitStatus, SIGNAL_NAMES } from './exit-status';

describe('exitStatus', () => {
  // The cases measured on Slurm 22.05 (sacct -X and .batch), and what the simulated cluster reports for each.
  it.each([
    ['`exit 3`: FAILED 3:0', 3, null, { kind: 'code', exitCode: 3, signal: null, signalName: null, slurm: '3:0' }],
    ['a clean end: COMPLETED 0:0', 0, null, { kind: 'code', exitCode: 0, signal: null, signalName: null, slurm: '0:0' }],
    ['TIMEOUT, or cancelled while running: the batch step 0:15', 0, 15, { kind: 'signal', exitCode: 0, signal: 15, signalName: 'SIGTERM', slurm: '0:15' }],
    ['`kill -9 $$`: FAILED 0:9', 0, 9, { kind: 'signal', exitCode: 0, signal: 9, signalName: 'SIGKILL', slurm: '0:9' }],
    ['a segfault: 0:11', 0, 11, { kind: 'signal', exitCode: 0, signal: 11, signalName: 'SIGSEGV', slurm: '0:11' }],
    ['a signal without a common name', 0, 40, { kind: 'signalNumber', exitCode: 0, signal: 40, signalName: null, slurm: '0:40' }],
    ['a signal with no exit code reported counts as 0', null, 15, { kind: 'signal', exitCode: 0, signal: 15, signalName: 'SIGTERM', slurm: '0:15' }],
  ] as const)('%s', (_label, exitCode, signal, expected) => {
    expect(exitStatus(exitCode, signal)).toEqual(expected);
  });

  it('says nothing for a job that runs or never ran', () => {
    expect(exitStatus(null, null)).toBeNull();
    expect(exitStatus(null, 0)).toBeNull();
  });

  it('names the common signals', () => {
    expect([1, 2, 6, 9, 11, 15].map((n) => SIGNAL_NAMES[n])).toEqual(['SIGHUP', 'SIGINT', 'SIGABRT', 'SIGKILL', 'SIGSEGV', 'SIGTERM']);
  });
});
