// The REST API's reference, rendered on the server from the OpenAPI document the API serves
// (server/api/rest-document.ts), so the two cannot disagree: every operation grouped by its tag, each a
// <details> (keyboard and screen readers open it as any disclosure) with its parameters, its body's
// fields, its answers and a curl line. No script: the page weighs what every other page weighs (Swagger
// UI was 593 KB of JavaScript and logged an error).
import type { ReactNode } from 'react';
import type { OpenApiDocument } from '~/server/api/rest-document';

type Json = Record<string, unknown>;

export interface ReferenceLabels {
  parameters: string;
  body: string;
  responses: string;
  name: string;
  where: string;
  type: string;
  required: string;
  description: string;
  yes: string;
  noToken: string;
  example: string;
}

const METHOD_STYLE: Record<string, string> = {
  get: 'bg-sky-100 text-sky-900',
  post: 'bg-emerald-100 text-emerald-900',
  put: 'bg-amber-100 text-amber-900',
  patch: 'bg-amber-100 text-amber-900',
  delete: 'bg-rose-100 text-rose-900',
};

/** A schema's or operation's text field ('' when it has none). */
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** resolve follows a local `$ref` (#/components/…) once it is one; anything else as it is. */
function resolve(doc: OpenApiDocument, value: unknown): Json {
  if (!isObject(value)) return {};
  const ref = value.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return value;
  let at: unknown = doc;
  for (const part of ref.slice(2).split('/')) at = isObject(at) ? at[part] : undefined;
  return isObject(at) ? at : {};
}

/** typeOf says a schema's type in a few words: `string (uuid)`, `integer`, `"a" | "b"`, `array of object`. */
export function typeOf(doc: OpenApiDocument, raw: unknown, depth = 0): string {
  const schema = resolve(doc, raw);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const variants = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(variants) && depth < 3) return [...new Set(variants.map((v) => typeOf(doc, v, depth + 1)))].join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : typeof schema.type === 'string' ? schema.type : 'object';
  if (type === 'array' && depth < 3) return `array of ${typeOf(doc, schema.items, depth + 1)}`;
  return typeof schema.format === 'string' ? `${type} (${schema.format})` : type;
}

interface Field {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** fieldsOf lists an object schema's properties (a body's fields), required first as written. */
function fieldsOf(doc: OpenApiDocument, raw: unknown): Field[] {
  const schema = resolve(doc, raw);
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, value]) => ({ name, type: typeOf(doc, value), required: required.has(name), description: text(resolve(doc, value).description) }));
}

/** exampleOf is a body to start from: each required field with a value of its type. */
function exampleOf(doc: OpenApiDocument, raw: unknown): Json {
  const schema = resolve(doc, raw);
  const properties = isObject(schema.properties) ? schema.properties : {};
  const out: Json = {};
  for (const field of fieldsOf(doc, raw).filter((f) => f.required)) {
    const own = resolve(doc, properties[field.name]);
    const t = field.type;
    out[field.name] = Array.isArray(own.enum) ? own.enum[0] : t.startsWith('integer') || t.startsWith('number') ? 1 : t.startsWith('boolean') ? true : t.startsWith('array') ? [] : t.startsWith('object') ? {} : `<${field.name}>`;
  }
  return out;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: unknown;
}

interface OperationView {
  method: string;
  path: string;
  id: string;
  summary: string;
  description: string;
  public: boolean;
  parameters: Parameter[];
  body: unknown;
  responses: [string, string][];
}

/** operationsByTag lists the document's operations under their first tag, in the document's order. */
function operationsByTag(doc: OpenApiDocument): [string, OperationView[]][] {
  const groups = new Map<string, OperationView[]>();
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(operations as unknown as Record<string, Json>)) {
      const tag = Array.isArray(raw.tags) && typeof raw.tags[0] === 'string' ? raw.tags[0] : 'other';
      const content = isObject(raw.requestBody) && isObject(raw.requestBody.content) ? (raw.requestBody.content as Record<string, Json>)['application/json'] : undefined;
      const responses = isObject(raw.responses) ? Object.entries(raw.responses as Record<string, Json>).map(([status, r]): [string, string] => [status, text(resolve(doc, r).description)]) : [];
      const view: OperationView = {
        method,
        path,
        id: `op-${(text(raw.operationId) || `${method}-${path}`).replace(/[^A-Za-z0-9_-]/g, '-')}`,
        summary: text(raw.summary),
        description: text(raw.description),
        public: Array.isArray(raw.security) && raw.security.length === 0,
        parameters: (Array.isArray(raw.parameters) ? raw.parameters : []).map((p) => resolve(doc, p) as unknown as Parameter),
        body: content?.schema,
        responses,
      };
      groups.set(tag, [...(groups.get(tag) ?? []), view]);
    }
  }
  return [...groups];
}

function curlOf(doc: OpenApiDocument, op: OperationView, base: string): string {
  const query = op.parameters.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=<${p.name}>`);
  const url = `${base}${op.path}${query.length ? `?${query.join('&')}` : ''}`;
  const lines = [`curl${op.method === 'get' ? '' : ` -X ${op.method.toUpperCase()}`} "${url}"`];
  if (!op.public) lines.push('  -H "Authorization: Bearer $PORTAL_TOKEN"');
  if (op.parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')) lines.push('  -H "Idempotency-Key: <a key of yours>"');
  if (op.body !== undefined) lines.push('  -H "Content-Type: application/json"', `  -d '${JSON.stringify(exampleOf(doc, op.body))}'`);
  return lines.join(' \\\n');
}

function Table({ head, rows }: { head: string[]; rows: ReactNode[][] }) {
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-left text-xs">
        <thead>
          <tr className="border-b border-slate-200 text-slate-600">
            {head.map((h) => (
              <th key={h} scope="col" className="py-1 pr-3 font-medium">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((cells, i) => (
            <tr key={i} className="border-b border-slate-100 align-top">
              {cells.map((cell, j) => (
                <td key={j} className={`py-1 pr-3 ${j === 0 ? 'font-mono text-slate-900' : 'text-slate-700'}`}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** ApiReference renders the document's operations; `base` is the API's address as the reader reaches it. */
export function ApiReference({ doc, base, labels }: { doc: OpenApiDocument; base: string; labels: ReferenceLabels }) {
  return (
    <div data-testid="api-reference" className="space-y-6">
      {operationsByTag(doc).map(([tag, operations]) => (
        <section key={tag} aria-labelledby={`tag-${tag}`} className="space-y-2">
          <h3 id={`tag-${tag}`} className="text-sm font-semibold capitalize text-slate-900">
            {tag}
          </h3>
          {operations.map((op) => (
            <details key={`${op.method} ${op.path}`} id={op.id} className="rounded-md border border-slate-200 bg-white">
              <summary className="flex cursor-pointer flex-wrap items-baseline gap-x-3 gap-y-1 px-3 py-2 text-sm focus-visible:outline focus-visible:outline-2 focus-visible:outline-indigo-600">
                <span className={`inline-block w-16 rounded px-1.5 py-0.5 text-center font-mono text-xs font-semibold uppercase ${METHOD_STYLE[op.method] ?? 'bg-slate-100 text-slate-900'}`}>{op.method}</span>
                <code className="break-all font-mono text-slate-900" data-testid="api-path">
                  {op.path}
                </code>
                <span className="text-slate-600">{op.summary}</span>
              </summary>
              <div className="space-y-3 border-t border-slate-200 px-3 py-3">
                {op.description ? <p className="text-xs text-slate-700">{op.description}</p> : null}
                {op.public ? <p className="text-xs text-slate-700">{labels.noToken}</p> : null}
                {op.parameters.length > 0 ? (
                  <div>
                    <h4 className="mb-1 text-xs font-semibold text-slate-900">{labels.parameters}</h4>
                    <Table head={[labels.name, labels.where, labels.type, labels.required, labels.description]} rows={op.parameters.map((p) => [p.name, p.in, typeOf(doc, p.schema), p.required ? labels.yes : '', p.description ?? text(resolve(doc, p.schema).description)])} />
                  </div>
                ) : null}
                {op.body !== undefined ? (
                  <div>
                    <h4 className="mb-1 text-xs font-semibold text-slate-900">{labels.body}</h4>
                    <Table head={[labels.name, labels.type, labels.required, labels.description]} rows={fieldsOf(doc, op.body).map((f) => [f.name, f.type, f.required ? labels.yes : '', f.description])} />
                  </div>
                ) : null}
                <div>
                  <h4 className="mb-1 text-xs font-semibold text-slate-900">{labels.responses}</h4>
                  <Table head={['HTTP', labels.description]} rows={op.responses.map(([status, description]) => [status, description])} />
                </div>
                <div>
                  <h4 className="mb-1 text-xs font-semibold text-slate-900">{labels.example}</h4>
                  {/* Focusable: a line wider than the page scrolls sideways from the keyboard too. */}
                  <pre tabIndex={0} aria-label={`${labels.example}: curl`} className="overflow-x-auto rounded-md bg-slate-900 p-3 text-xs leading-relaxed text-slate-100 focus-visible:outline focus-visible:outline-2 focus-visible:outline-indigo-600">
                    <code>{curlOf(doc, op, base)}</code>
                  </pre>
                </div>
              </div>
            </details>
          ))}
        </section>
      ))}
    </div>
  );
}
