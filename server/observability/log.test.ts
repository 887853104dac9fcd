// The JSON log lines: one object per line, with the request id (and the API token's name) of the
// request they were written in, and nothing of the kind outside a request.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { inRequestScope } from '~/server/request-scope';
import { createLogger } from './log';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

describe('structured logs', () => {
  it('carries the request id and the token name of the request a line was written in', async () => {
    const { lines, logger } = capture();
    await inRequestScope({ requestId: 'req-42', token: { id: 't1', name: 'ci-pipeline' } }, async () => {
      await Promise.resolve(); // across an await, as a service deep in the request would log
      logger.warn({ jobId: 'j1' }, 'the scheduler is unreachable');
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', msg: 'the scheduler is unreachable', jobId: 'j1', requestId: 'req-42', token: 'ci-pipeline' });
    expect(Date.parse(lines[0]!.time as string)).not.toBeNaN();
  });

  it('writes no request fields outside a request, and no token without one', () => {
    const { lines, logger } = capture();
    logger.info('worker round');
    inRequestScope({ requestId: 'req-7' }, () => logger.info('browser call'));
    expect(lines[0]).not.toHaveProperty('requestId');
    expect(lines[1]).toMatchObject({ requestId: 'req-7', msg: 'browser call' });
    expect(lines[1]).not.toHaveProperty('token');
  });

  it('leaves out lines below its level and renders errors with their stack', () => {
    const { lines, logger } = capture();
    logger.debug('noise');
    logger.error({ err: new Error('slurmrestd unreachable') }, 'round failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', err: { type: 'Error', message: 'slurmrestd unreachable' } });
    expect((lines[0]!.err as { stack: string }).stack).toContain('slurmrestd unreachable');
  });
});
