// A small JSON Schema checker for the tests: does an answer match what the OpenAPI document says?
// It knows the keywords the generated document uses (zod-openapi's output, $refs resolved first).

type Schema = Record<string, unknown> | boolean;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(expected: string, actual: string): boolean {
  return expected === actual || (expected === 'number' && actual === 'integer');
}

/** schemaProblems lists where a value breaks a schema ([] when it matches). */
export function schemaProblems(schema: Schema, value: unknown, at = '$'): string[] {
  if (schema === true || schema === undefined) return [];
  if (schema === false) return [`${at}: not allowed`];
  const s = schema;
  const problems: string[] = [];
  if (s.$ref) return [`${at}: unresolved $ref ${JSON.stringify(s.$ref)}`];
  const actual = typeOf(value);
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => typeMatches(t, actual))) return [`${at}: ${actual}, expected ${types.join('|')}`];
  }
  if ('const' in s && s.const !== value) problems.push(`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(s.const)}`);
  if (Array.isArray(s.enum) && !s.enum.includes(value)) problems.push(`${at}: ${JSON.stringify(value)} not in enum`);
  if (Array.isArray(s.anyOf) && !s.anyOf.some((sub) => schemaProblems(sub as Schema, value, at).length === 0)) problems.push(`${at}: matches none of anyOf`);
  if (Array.isArray(s.oneOf) && s.oneOf.filter((sub) => schemaProblems(sub as Schema, value, at).length === 0).length !== 1) problems.push(`${at}: does not match exactly one of oneOf`);
  if (Array.isArray(s.allOf)) for (const sub of s.allOf) problems.push(...schemaProblems(sub as Schema, value, at));
  if (typeof value === 'string') {
    if (typeof s.minLength === 'number' && value.length < s.minLength) problems.push(`${at}: shorter than ${s.minLength}`);
    if (typeof s.maxLength === 'number' && value.length > s.maxLength) problems.push(`${at}: longer than ${s.maxLength}`);
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) problems.push(`${at}: does not match ${s.pattern}`);
    if (s.format === 'date-time' && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) problems.push(`${at}: ${value} is not an ISO-8601 date-time`);
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) problems.push(`${at}: below ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) problems.push(`${at}: above ${s.maximum}`);
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) problems.push(`${at}: not above ${s.exclusiveMinimum}`);
  }
  if (Array.isArray(value) && s.items !== undefined) value.forEach((item, i) => problems.push(...schemaProblems(s.items as Schema, item, `${at}[${i}]`)));
  if (actual === 'object') {
    const object = value as Record<string, unknown>;
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    for (const name of (s.required ?? []) as string[]) if (!(name in object)) problems.push(`${at}.${name}: missing`);
    for (const [name, item] of Object.entries(object)) {
      if (name in properties) problems.push(...schemaProblems(properties[name]!, item, `${at}.${name}`));
      else if (s.additionalProperties !== undefined) problems.push(...schemaProblems(s.additionalProperties as Schema, item, `${at}.${name}`));
    }
  }
  return problems;
}
