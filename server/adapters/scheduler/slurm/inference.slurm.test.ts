// An inference service on a real Slurm (issue #29): a batch job that runs the portal's model server
// (bin/portal-model-server.mjs) as the person's Unix user on its node; the portal gives the job its model
// name and connection file (PORTAL_MODEL_*), the server writes host (the node's name), port and a fresh
// secret there, and the gateway reaches it where slurmctld reaches the node. The official `openai` client
// gets an answer through the gateway; stopping the service ends the job COMPLETED and the server with it.
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { jobs, modelCalls } from '~/db/schema';
import { connectionFileOf } from '~/server/adapters/scheduler/simulated-services';
import { createRestHandler } from '~/server/api/rest';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { jobDirOf, workspaceOf } from '~/server/services/files/workspace';
import { reconcileOnce } from '~/server/services/jobs/reconciler';
import { apiTokens } from '~/server/testing/api-tokens';
import { serveFetch } from '~/server/testing/serve-fetch';
import { useSlurmPortal, waitForJson, waitUntil } from './testing';

describe('an inference service on a real Slurm', () => {
  const slurm = useSlurmPortal();
  const now = () => new Date();

  it('runs the model server as the batch job, answers through the gateway, and stops it with the service', { timeout: 300_000 }, async () => {
    const { db, port } = slurm;
    const { owner, allocationId, projectId, api } = await slurm.newTenant('Slurm Inference');
    const server = path.resolve('bin/portal-model-server.mjs');
    const submitted = await api.job.submit({
      allocationId,
      resourceClassId: 'h100',
      name: 'support bot',
      kind: 'inference',
      servedModel: 'slurm-inference/support-7b',
      gpus: 1,
      nodes: 1,
      walltimeMinutes: 10,
      image: 'vllm/vllm-openai:v0.6.3',
      // The test cluster runs commands as they are (no container runtime): Node and the portal's own server.
      command: `exec ${process.execPath} ${server}`,
      env: {},
      idempotencyKey: randomUUID(),
    });
    const row = async () => (await db.select().from(jobs).where(eq(jobs.id, submitted.id)))[0]!;
    expect(await waitUntil(async () => (await reconcileOnce(db, port, now()), (await row()).state === 'RUNNING'), 120)).toBe(true);

    // The server writes its connection file into the job's folder once it listens.
    const jobDir = jobDirOf(workspaceOf(configuredSiteRoots(), 'de-jena', projectId), submitted.id);
    const file = connectionFileOf(jobDir);
    const connection = await waitForJson<{ host: string; port: number; model: string; secret: string }>(file);
    expect(connection).toBeDefined();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const job = await row();
    expect(job.nodeList).toContain(connection!.host);
    expect(connection!.model).toBe('slurm-inference/support-7b');

    // Through the gateway with the official client and a token of scope `inference`.
    const tokens = apiTokens(db);
    const served = await serveFetch(createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 1000, scheduler: port }));
    try {
      const client = new OpenAI({ baseURL: `${served.origin}/api/v1/openai/v1`, apiKey: await tokens.mint(owner, ['inference'], { projectId }), maxRetries: 0 });
      expect((await client.models.list()).data.map((m) => m.id)).toEqual(['slurm-inference/support-7b']);
      const answer = await client.chat.completions.create({ model: 'slurm-inference/support-7b', messages: [{ role: 'user', content: 'Hello from Slurm' }], max_tokens: 12 });
      expect(answer.choices[0]!.message.content!.length).toBeGreaterThan(0);
      expect(answer.usage!.completion_tokens).toBeGreaterThan(0);
      let streamed = '';
      for await (const chunk of await client.chat.completions.create({ model: 'slurm-inference/support-7b', messages: [{ role: 'user', content: 'Hello from Slurm' }], max_tokens: 12, stream: true })) streamed += chunk.choices[0]?.delta.content ?? '';
      expect(streamed).toBe(answer.choices[0]!.message.content);
      // Both calls are recorded as the Slurm job's traffic, at its site, with their tokens (never their text).
      const calls = await db.select().from(modelCalls).where(eq(modelCalls.serviceJobId, submitted.id));
      expect(calls.map((c) => c.status)).toEqual(['settled', 'settled']);
      expect(calls.every((c) => c.siteId === 'de-jena' && c.promptTokens > 0 && c.completionTokens === answer.usage!.completion_tokens)).toBe(true);
    } finally {
      await served.close();
    }

    // A service serves for a while: two seconds more, so Slurm's whole seconds count some GPU time.
    await new Promise((resolve) => setTimeout(resolve, 2000));

    // Stopped: the stop signal ends the server (which removes its connection file); the job is COMPLETED, charged what it ran.
    await api.job.cancel({ jobId: submitted.id });
    expect(await waitUntil(async () => (await reconcileOnce(db, port, now()), (await row()).settledAt !== null), 120)).toBe(true);
    const ended = await row();
    expect(ended.state).toBe('COMPLETED');
    expect(ended.gpuSeconds).toBeGreaterThan(0);
    expect(ended.chargedAmount).toBe(ended.gpuSeconds);
    expect(ended.startedAt).toEqual(job.startedAt);
    expect(await waitUntil(async () => stat(file).then(() => false, () => true), 30)).toBe(true);
  });
});
