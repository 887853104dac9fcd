// The REST API's OpenAPI 3.1 document (`/api/v1/openapi.json`): generated from the procedures'
// `meta.openapi` and their zod input and output schemas by trpc-to-openapi, then adjusted where the
// REST layer (server/api/rest.ts) answers differently from what the generator assumes: the one error
// shape, the rate-limit headers and 429, the Idempotency-Key header instead of a body field, and the
// two paths that are not procedures (the CSV and this document).
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { appRouter } from './root';

/** The submissions whose Idempotency-Key header is their idempotencyKey: a job, a session. */
export const IDEMPOTENT_POSTS: ReadonlySet<string> = new Set(['/jobs', '/sessions']);

/** The OpenAPI document as plain JSON (what is served and what the tests validate). */
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
};

interface Operation {
  security?: unknown[];
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
}

interface JsonSchema {
  properties?: Record<string, unknown>;
  required?: string[];
}

export const API_VERSION = '1.0.0';

const errorSchema = {
  type: 'object',
  description: 'Every refusal (status 400 and above) has this shape.',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'NOT_FOUND, BAD_REQUEST, UNAUTHORIZED, FORBIDDEN, TOO_MANY_REQUESTS, …', examples: ['NOT_FOUND'] },
        message: { type: 'string', description: 'What went wrong, in the language of Accept-Language (English or German).' },
        fields: { type: 'object', additionalProperties: { type: 'string' }, description: 'The input fields at fault, each with its message.' },
        requestId: { type: 'string', description: 'The request id, also in the X-Request-Id header; quote it when asking for help.' },
      },
      required: ['code', 'message', 'requestId'],
    },
  },
  required: ['error'],
};

const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'Requests the token may make per window (a minute).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window starts again.', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'The request id (the caller’s X-Request-Id when it is a plain one, else a new one).', schema: { type: 'string' } },
};

const headerRefs = Object.fromEntries(Object.keys(rateLimitHeaders).map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const periodQuery = z.object({
  month: z.string().optional().meta({ description: 'A month, YYYY-MM' }),
  quarter: z.string().optional().meta({ description: 'A quarter, YYYY-Qn' }),
  from: z.string().optional().meta({ description: 'First day, YYYY-MM-DD (with to)' }),
  to: z.string().optional().meta({ description: 'Last day, YYYY-MM-DD (inclusive)' }),
});

function generate(portalUrl: string): OpenApiDocument {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'AI Factory Portal API',
    version: API_VERSION,
    description:
      'Submit and follow jobs, read allocations, usage and invoices, and apply for compute time from scripts. Authenticate with a personal API token from your profile page: `Authorization: Bearer afp_…`. The token fixes the organisation and what may be done (its scopes). Dates are ISO-8601 strings; lists page with `limit` and `cursor` (pass `nextCursor`).',
    baseUrl: `${portalUrl}/api/v1`,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A personal API token (afp_…) made on the profile page.' } },
    paths: {
      '/usage.csv': {
        get: {
          operationId: 'usage-csv',
          summary: 'Usage of a period as CSV: one row per job, the same file as the usage page’s download',
          tags: ['usage'],
          requestParams: { query: periodQuery },
          responses: { 200: { description: 'The per-job usage table (columns in docs/CSV.md)', content: { 'text/csv': { schema: z.string() } } } },
        },
      },
      '/projects/{projectId}/files/content': {
        get: {
          operationId: 'files-content',
          summary: 'A file of a project workspace (Range and If-Range for resuming), or a folder as a streamed tar. Uploads: tus 1.0 at /uploads (docs/api.md)',
          tags: ['files'],
          requestParams: { path: z.object({ projectId: z.uuid() }), query: z.object({ site: z.string().describe('The site id (GET /projects/{projectId}/workspaces)'), path: z.string().describe('The path in the workspace, such as data/train.jsonl') }) },
          responses: { 200: { description: 'The bytes, always as an attachment (206 for a Range)', content: { 'application/octet-stream': { schema: z.string().meta({ format: 'binary' }) } } } },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          summary: 'This document (no token needed)',
          tags: ['meta'],
          security: [],
          responses: { 200: { description: 'The OpenAPI 3.1 document', content: { 'application/json': { schema: z.object({ openapi: z.string() }).loose() } } } },
        },
      },
    },
  }) as unknown as OpenApiDocument;

  // The generator's error schemas describe trpc-to-openapi's own error body, which the REST layer rewrites.
  const schemas = Object.fromEntries(Object.entries(doc.components.schemas ?? {}).filter(([name]) => !name.startsWith('error.')));
  doc.components = { ...doc.components, schemas: { ...schemas, Error: errorSchema }, headers: rateLimitHeaders };
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const operation of Object.values(operations)) {
      const isPublic = Array.isArray(operation.security) && operation.security.length === 0;
      if (!isPublic) {
        operation.security = [{ bearerAuth: [] }];
        operation.responses['401'] ??= { description: 'No token, or one that is unknown, expired or revoked' };
        operation.responses['403'] ??= { description: 'The token lacks the scope, or the person the role' };
        operation.responses['429'] = { description: 'Too many requests with this token; wait Retry-After seconds', headers: { ...headerRefs, 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } } };
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        response.headers = { ...(isPublic ? { 'X-Request-Id': headerRefs['X-Request-Id'] } : headerRefs), ...response.headers };
        if (Number(status) >= 400) response.content = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
      }
    }
    // The idempotency key travels in the Idempotency-Key header (documented by the procedure's meta), not in the body.
    const submit = IDEMPOTENT_POSTS.has(path) ? operations.post?.requestBody?.content['application/json']?.schema : undefined;
    if (submit) {
      delete submit.properties?.idempotencyKey;
      submit.required = submit.required?.filter((name) => name !== 'idempotencyKey');
    }
  }
  return doc;
}

const cache = new Map<string, OpenApiDocument>();

/** restDocument returns the OpenAPI document for a portal address (built once per process). */
export function restDocument(portalUrl: string): OpenApiDocument {
  let doc = cache.get(portalUrl);
  if (!doc) {
    doc = generate(portalUrl);
    cache.set(portalUrl, doc);
  }
  return doc;
}
