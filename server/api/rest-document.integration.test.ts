// The OpenAPI document of /api/v1 validates, and every operation in it answers as documented: one
// example request each, its status the documented one, its answer matching the documented schema.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { configuredSiteRoots } from '~/server/services/files/roots';
import { workspaceOf } from '~/server/services/files/workspace';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Db, DbHandle } from '~/db/client';
import { allocations } from '~/db/schema';
import { createRestHandler } from '~/server/api/rest';
import { restDocument, type OpenApiDocument } from '~/server/api/rest-document';
import { acceptingScheduler, applicationInput, type Fixture } from '~/server/testing/authorization-policy';
import { apiTokens } from '~/server/testing/api-tokens';
import { activeAllocation, callerFor, createStaff, createTenant, dbTargets, openTestDb } from '~/server/testing/harness';
import { schemaProblems } from '~/server/testing/json-schema';

const today = new Date().toISOString().slice(0, 10);
const portalUrl = 'http://portal.test';

interface Example {
  /** The path with its parameters filled in, and the query. */
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document with a server, the bearer scheme and every operation secured or public on purpose', async () => {
    const doc = restDocument(portalUrl);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: `${portalUrl}/api/v1` }]);
    expect(doc.components.securitySchemes).toHaveProperty('bearerAuth');
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const isPublic = path === '/openapi.json';
        expect(operation.security, `${method} ${path}`).toEqual(isPublic ? [] : [{ bearerAuth: [] }]);
      }
    }
    // The key travels in the header, not the body.
    const submit = doc.paths['/jobs']!.post!;
    expect(JSON.stringify(submit.requestBody)).not.toContain('idempotencyKey');
    expect(submit.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')).toBe(true);
  });
});

describe.each(dbTargets())('every path of the OpenAPI document answers as documented, on %s', (target) => {
  let handle: DbHandle;
  let db: Db;
  let handler: (req: Request) => Promise<Response>;
  let token: string;
  let examples: Record<string, () => Promise<Example>>;
  let doc: OpenApiDocument;

  beforeAll(async () => {
    handle = await openTestDb(target);
    db = handle.db;
    const admin = await createStaff(db, 'admin');
    const a = await createTenant(db);
    const { allocationId, projectId } = await activeAllocation(db, a, admin, { gpuHours: 500, today });
    const browser = callerFor(db, { userId: a.userId, orgId: a.orgId, scheduler: acceptingScheduler });
    const jobInput = { allocationId, resourceClassId: 'h100', gpus: 1, nodes: 1, walltimeMinutes: 30 };
    const submitBody = { ...jobInput, name: 'doc example', kind: 'training' as const, image: 'pytorch:2', command: 'python train.py' };
    const sessionInput = { allocationId, resourceClassId: 'h100', app: 'jupyter' as const, gpus: 1, walltimeMinutes: 60, idleTimeoutMinutes: 30 };
    const job = await browser.job.submit({ ...submitBody, idempotencyKey: 'doc-example-job' });
    const tokens = apiTokens(db);
    token = await tokens.mint(a, ['read', 'jobs:write', 'applications:write', 'files:read', 'files:write']);
    // A workspace with a folder and a file to read, move and delete.
    const files = callerFor(db, { userId: a.userId, orgId: a.orgId });
    await files.files.makeFolder({ projectId, site: 'de-jena', path: 'doc' });
    await files.files.makeFolder({ projectId, site: 'de-jena', path: 'doc/to-move' });
    await files.files.makeFolder({ projectId, site: 'de-jena', path: 'doc/to-delete' });
    await writeFile(path.join(workspaceOf(configuredSiteRoots(), 'de-jena', projectId).dir, 'doc', 'readme.txt'), 'hello\n');
    const at = `site=de-jena`;
    handler = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl, perMinute: 1000, scheduler: acceptingScheduler });
    const application = applicationInput({ today } as Fixture, { projectId });
    examples = {
      'GET /jobs': () => Promise.resolve({ url: '/jobs?limit=2&status=all' }),
      'POST /jobs': () => Promise.resolve({ url: '/jobs', body: submitBody, headers: { 'idempotency-key': 'doc-example-rest' } }),
      'POST /jobs/estimate': () => Promise.resolve({ url: '/jobs/estimate', body: { ...jobInput, runtimeSeconds: 600 } }),
      'GET /jobs/{jobId}': () => Promise.resolve({ url: `/jobs/${job.id}` }),
      'POST /jobs/{jobId}/cancel': async () => ({ url: `/jobs/${(await browser.job.submit({ ...submitBody, idempotencyKey: 'doc-example-cancel' })).id}/cancel` }),
      'GET /allocations': () => Promise.resolve({ url: '/allocations' }),
      'GET /usage': () => Promise.resolve({ url: `/usage?month=${today.slice(0, 7)}&groupBy=kind` }),
      'GET /usage.csv': () => Promise.resolve({ url: `/usage.csv?from=${today}&to=${today}` }),
      'GET /invoices': () => Promise.resolve({ url: '/invoices' }),
      'POST /applications': () => Promise.resolve({ url: '/applications', body: application }),
      'POST /applications/{applicationId}/submit': async () => ({ url: `/applications/${(await browser.application.create(application as never)).id}/submit` }),
      'POST /applications/{applicationId}/report': async () => {
        const [approved] = await db.select({ id: allocations.applicationId }).from(allocations).where(eq(allocations.id, allocationId));
        return { url: `/applications/${approved!.id}/report`, body: { summary: 'Ablations of the ledger under load; the results are in the paper below.', publications: ['https://doi.org/10.1234/example'], datasets: [] } };
      },
      'GET /openapi.json': () => Promise.resolve({ url: '/openapi.json' }),
      'GET /projects/{projectId}/workspaces': () => Promise.resolve({ url: `/projects/${projectId}/workspaces` }),
      'GET /projects/{projectId}/files': () => Promise.resolve({ url: `/projects/${projectId}/files?${at}&path=doc&limit=50` }),
      'GET /projects/{projectId}/files/stat': () => Promise.resolve({ url: `/projects/${projectId}/files/stat?${at}&path=doc/readme.txt` }),
      'GET /projects/{projectId}/files/content': () => Promise.resolve({ url: `/projects/${projectId}/files/content?${at}&path=doc/readme.txt` }),
      'POST /projects/{projectId}/files/folders': () => Promise.resolve({ url: `/projects/${projectId}/files/folders`, body: { site: 'de-jena', path: 'doc/new' } }),
      'POST /projects/{projectId}/files/move': () => Promise.resolve({ url: `/projects/${projectId}/files/move`, body: { site: 'de-jena', from: 'doc/to-move', to: 'doc/moved' } }),
      'DELETE /projects/{projectId}/files': () => Promise.resolve({ url: `/projects/${projectId}/files?${at}&path=doc/to-delete` }),
      'GET /jobs/{jobId}/files': () => Promise.resolve({ url: `/jobs/${job.id}/files` }),
      'GET /jobs/{jobId}/output': () => Promise.resolve({ url: `/jobs/${job.id}/output?stream=stdout&limit=1024` }),
      'POST /sessions': () => Promise.resolve({ url: '/sessions', body: sessionInput, headers: { 'idempotency-key': 'doc-example-session' } }),
      'GET /sessions': () => Promise.resolve({ url: '/sessions' }),
      'POST /sessions/{jobId}/extend': async () => ({ url: `/sessions/${(await browser.session.start({ ...sessionInput, idempotencyKey: 'doc-example-session-extend' })).id}/extend`, body: { minutes: 30 } }),
      'POST /sessions/{jobId}/end': async () => ({ url: `/sessions/${(await browser.session.start({ ...sessionInput, idempotencyKey: 'doc-example-session-end' })).id}/end` }),
    };
    doc = (await SwaggerParser.dereference(structuredClone(restDocument(portalUrl)) as never)) as unknown as OpenApiDocument;
  });
  afterAll(async () => handle?.close());

  it('has one example for each operation and no example for an operation it lacks', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual(Object.keys(examples).sort());
  });

  it('answers each example with the documented status, headers and schema', async () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const name = `${method.toUpperCase()} ${path}`;
        const example = await examples[name]!();
        const headers = new Headers({ authorization: `Bearer ${token}`, ...example.headers });
        if (example.body !== undefined) headers.set('content-type', 'application/json');
        const response = await handler(new Request(`${portalUrl}/api/v1${example.url}`, { method: method.toUpperCase(), headers, body: example.body === undefined ? undefined : JSON.stringify(example.body) }));
        const text = await response.text();
        expect(response.status, `${name}: ${text.slice(0, 300)}`).toBe(200);
        const documented = operation.responses['200']!;
        for (const header of Object.keys(documented.headers ?? {})) expect(response.headers.get(header), `${name}: header ${header}`).not.toBeNull();
        const [contentType, media] = Object.entries(documented.content ?? {})[0]!;
        expect(response.headers.get('content-type'), name).toContain(contentType);
        const answer = contentType === 'application/json' ? (JSON.parse(text) as unknown) : text;
        expect(Object.keys(media.schema as object).length, `${name}: an empty schema checks nothing`).toBeGreaterThan(0);
        expect(schemaProblems(media.schema as never, answer), name).toEqual([]);
      }
    }
  });

  it('answers a refusal in the documented error shape', async () => {
    const response = await handler(new Request(`${portalUrl}/api/v1/jobs/00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(404);
    const schema = doc.paths['/jobs/{jobId}']!.get!.responses['404']!.content!['application/json']!.schema;
    expect(schemaProblems(schema as never, await response.json())).toEqual([]);
    // And the checker is not blind: a wrong shape is caught, and so is a date that is not ISO-8601.
    expect(schemaProblems(schema as never, { message: 'Not found', code: 'NOT_FOUND' })).not.toEqual([]);
    const job = doc.paths['/jobs/{jobId}']!.get!.responses['200']!.content!['application/json']!.schema as { properties: Record<string, Record<string, unknown>> };
    expect(schemaProblems(job.properties.submittedAt!, '2026-12-02T08:00:00.000Z')).toEqual([]);
    expect(schemaProblems(job.properties.submittedAt!, 'Wed Dec 02 2026')).not.toEqual([]);
  });
});
