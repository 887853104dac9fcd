// A job file (`jobs submit --file job.yaml`): the web form's fields, in JSON or in a small subset of
// YAML — top-level `key: value`, one nested map (env), block scalars (`|`, `>`) for the command,
// quoted strings and comments. Anything beyond that (lists, anchors, tags, flow maps) is refused
// with its line number rather than guessed at, so no dependency is needed and nothing is misread.
import { UsageError } from './exit-codes.mjs';

export const JOB_KINDS = ['training', 'fine_tuning', 'inference', 'batch'];

/** What a job file may hold, and the type each field is read as. */
const FIELDS = {
  name: 'string',
  kind: 'kind',
  allocationId: 'string',
  resourceClassId: 'string',
  gpus: 'int',
  nodes: 'int',
  walltimeMinutes: 'int',
  image: 'string',
  command: 'string',
  env: 'env',
  dependency: 'dependency',
  array: 'array',
};
/** Optional fields and their defaults: one node, no environment, no dependency, one job (not an array), as the form starts. */
const DEFAULTS = { nodes: 1, env: {}, dependency: undefined, array: undefined };

/**
 * parseArraySpec reads a job array as Slurm's --array writes it ("0-99", "1,3,5-11:2", "0-9999%64":
 * after % the most tasks running at once); the portal checks the rest and names what to fix.
 */
export function parseArraySpec(value, name = 'array') {
  const text = String(value).replace(/\s+/g, '');
  if (!/^\d+(-\d+(:\d+)?)?(,\d+(-\d+(:\d+)?)?)*(%\d+)?$/.test(text)) throw new UsageError(`"${name}" must be task indexes as Slurm's --array writes them, e.g. 0-99, 1,3,5-11:2 or 0-999%16 (after % the most tasks at once), not "${value}"`);
  return text;
}

export const DEPENDENCY_TYPES = ['afterok', 'afterany', 'afternotok'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * parseDependency reads a dependency as Slurm writes it — `afterok:<job id>[:<job id>…]` (afterany,
 * afternotok likewise) — with the portal's job ids, into the API's `{ type, jobIds }`.
 */
export function parseDependency(text, name = 'dependency') {
  const [type, ...ids] = String(text).trim().split(':');
  if (!DEPENDENCY_TYPES.includes(type) || ids.length === 0) throw new UsageError(`"${name}" must be ${DEPENDENCY_TYPES.join(', ')} followed by job ids, such as afterok:<job id>[:<job id>…]`);
  const bad = ids.find((id) => !UUID.test(id));
  if (bad !== undefined) throw new UsageError(`"${name}": "${bad}" is not a job id (a UUID, as \`portal-cli jobs list\` shows)`);
  if (ids.length > 16) throw new UsageError(`"${name}": a job can wait for at most 16 jobs`);
  return { type, jobIds: ids.map((id) => id.toLowerCase()) };
}

class YamlError extends UsageError {
  constructor(line, message) {
    super(`line ${line}: ${message}`);
  }
}

const KEY = /^([A-Za-z_][A-Za-z0-9_.-]*)\s*:(?:[ \t]+(.*))?$/;
const isBlank = (line) => /^\s*(#.*)?$/.test(line);
const indentOf = (line) => /^ */.exec(line)[0].length;

/** withoutComment cuts a plain scalar's comment (a # at the start or after a blank) and trims it. */
function withoutComment(text) {
  const match = /(^|[ \t])#/.exec(text);
  return (match ? text.slice(0, match.index) : text).trim();
}

/**
 * scalar reads one value on a key's line. Plain scalars stay strings (the job's schema decides what
 * is a number), so `PORT: 0800` in env keeps its leading zero; empty, ~ and null are null.
 */
function scalar(text, line) {
  const rest = text.trim();
  if (rest.startsWith('"')) {
    let end = 1;
    while (end < rest.length && rest[end] !== '"') end += rest[end] === '\\' ? 2 : 1;
    if (end >= rest.length) throw new YamlError(line, 'a double-quoted string does not end on its line');
    if (withoutComment(rest.slice(end + 1)) !== '') throw new YamlError(line, 'text after a quoted string');
    try {
      return JSON.parse(rest.slice(0, end + 1));
    } catch {
      throw new YamlError(line, 'an escape in a double-quoted string that this reader does not know (use \\n, \\t, \\", \\\\ or \\uXXXX)');
    }
  }
  if (rest.startsWith("'")) {
    let end = 1;
    for (; end < rest.length; end++) {
      if (rest[end] === "'") {
        if (rest[end + 1] === "'") end++;
        else break;
      }
    }
    if (end >= rest.length) throw new YamlError(line, 'a single-quoted string does not end on its line');
    if (withoutComment(rest.slice(end + 1)) !== '') throw new YamlError(line, 'text after a quoted string');
    return rest.slice(1, end).replaceAll("''", "'");
  }
  const plain = withoutComment(rest);
  if (plain === '{}') return {};
  if (/^[[{&*!|>%@`]/.test(plain)) throw new YamlError(line, `"${plain}" needs more YAML than job files use: quote the value, or write a map as indented lines`);
  if (plain === '' || plain === '~' || plain === 'null') return null;
  return plain;
}

/** blockScalar reads a `|` or `>` value from the indented lines that follow; returns the value and the next line's index. */
function blockScalar(header, lines, start, line) {
  const [, style, chomp = ''] = /^([|>])([+-]?)$/.exec(header) ?? [];
  if (!style) throw new YamlError(line, `block scalar header "${header}" is not supported: use |, |-, > or >-`);
  let end = start;
  while (end < lines.length && (lines[end].trim() === '' || indentOf(lines[end]) > 0)) end++;
  const body = lines.slice(start, end);
  const firstText = body.find((l) => l.trim() !== '');
  const indent = firstText === undefined ? 0 : indentOf(firstText);
  const texts = body.map((l, i) => {
    if (l.trim() !== '' && indentOf(l) < indent) throw new YamlError(start + i + 1, 'less indented than the block’s first line');
    return l.slice(indent);
  });
  // Folded (>): lines of a paragraph join with a blank, an empty line becomes a line break.
  let value = style === '|' ? texts.join('\n') : texts.reduce((acc, l, i) => (i === 0 ? l : l === '' ? `${acc}\n` : texts[i - 1] === '' ? acc + l : `${acc} ${l}`), '');
  const content = value.replace(/\n+$/, '');
  if (chomp === '-') value = content;
  else if (chomp === '') value = content === '' ? '' : `${content}\n`;
  else value = `${value}\n`;
  return { value, next: end };
}

/** parseYamlSubset reads the YAML subset described at the top of this file into a plain object. */
export function parseYamlSubset(text) {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const result = {};
  let i = 0;
  while (i < lines.length) {
    const raw = lines[i];
    const lineNo = i + 1;
    if (isBlank(raw) || raw.trim() === '---') {
      i++;
      continue;
    }
    if (raw.trim() === '...') break;
    if (raw.includes('\t') && /^\s*\t/.test(raw)) throw new YamlError(lineNo, 'tabs cannot indent YAML: use spaces');
    if (indentOf(raw) > 0) throw new YamlError(lineNo, 'unexpected indentation');
    if (/^-( |$)/.test(raw)) throw new YamlError(lineNo, 'a job file is a map of fields, not a list');
    const match = KEY.exec(raw);
    if (!match) throw new YamlError(lineNo, `expected "field: value", found "${raw.trim()}"`);
    const [, key, rest = ''] = match;
    if (Object.hasOwn(result, key)) throw new YamlError(lineNo, `"${key}" is given twice`);
    const header = withoutComment(rest);
    i++;
    if (/^[|>]/.test(header)) {
      const block = blockScalar(header, lines, i, lineNo);
      result[key] = block.value;
      i = block.next;
    } else if (header === '' && !rest.trim().startsWith('"') && !rest.trim().startsWith("'")) {
      // A nested map (env): the following more-indented lines, one `NAME: value` each.
      const map = {};
      let indent = null;
      while (i < lines.length && (isBlank(lines[i]) || indentOf(lines[i]) > 0)) {
        const nested = lines[i];
        if (!isBlank(nested)) {
          indent ??= indentOf(nested);
          if (indentOf(nested) !== indent) throw new YamlError(i + 1, `indent the entries of "${key}" alike`);
          if (/^-( |$)/.test(nested.trim())) throw new YamlError(i + 1, `"${key}" must be a map (NAME: value), not a list`);
          const entry = KEY.exec(nested.trim());
          if (!entry) throw new YamlError(i + 1, `expected "NAME: value" under "${key}"`);
          const [, name, value = ''] = entry;
          if (Object.hasOwn(map, name)) throw new YamlError(i + 1, `"${name}" is given twice`);
          if (/^[|>]/.test(withoutComment(value))) throw new YamlError(i + 1, 'block scalars are only supported at the top level');
          map[name] = scalar(value, i + 1);
        }
        i++;
      }
      result[key] = indent === null ? null : map;
    } else {
      result[key] = scalar(rest, lineNo);
    }
  }
  return result;
}

function integer(field, value) {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\+?\d+$/.test(value.trim())) return Number(value.trim());
  throw new UsageError(`"${field}" must be a whole number, not ${JSON.stringify(value)}`);
}

function environment(value) {
  if (value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new UsageError('"env" must be a map of NAME: value');
  return Object.fromEntries(
    Object.entries(value).map(([name, v]) => {
      if (v !== null && typeof v === 'object') throw new UsageError(`env "${name}" must be a text, not a ${Array.isArray(v) ? 'list' : 'map'}`);
      return [name, v === null ? '' : String(v)];
    }),
  );
}

/** jobFromFields checks a job file's fields (names, presence, types) and returns the body for POST /jobs. */
export function jobFromFields(fields) {
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) throw new UsageError('a job file must be a map of fields');
  const unknown = Object.keys(fields).filter((key) => !Object.hasOwn(FIELDS, key));
  if (unknown.length > 0) throw new UsageError(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (a job file has: ${Object.keys(FIELDS).join(', ')})`);
  const missing = Object.keys(FIELDS).filter((key) => (fields[key] === undefined || fields[key] === null) && !Object.hasOwn(DEFAULTS, key));
  if (missing.length > 0) throw new UsageError(`missing field${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  const job = {};
  for (const [field, type] of Object.entries(FIELDS)) {
    const value = fields[field] ?? DEFAULTS[field];
    if (type === 'int') job[field] = integer(field, value);
    else if (type === 'env') job[field] = environment(value);
    else if (type === 'dependency') {
      if (value !== undefined) job[field] = parseDependency(value, field);
    } else if (type === 'array') {
      if (value !== undefined) job[field] = parseArraySpec(value, field);
    }
    else if (typeof value === 'string' || typeof value === 'number') job[field] = String(value);
    else throw new UsageError(`"${field}" must be a text`);
  }
  if (!JOB_KINDS.includes(job.kind)) throw new UsageError(`"kind" must be one of ${JOB_KINDS.join(', ')}, not "${job.kind}"`);
  return job;
}

/** parseJobFile reads a job file's text (JSON if it starts with "{", else the YAML subset) into a job; errors name the file. */
export function parseJobFile(text, source) {
  try {
    const trimmed = text.replace(/^\uFEFF/, '').trimStart();
    let fields;
    if (trimmed.startsWith('{')) {
      try {
        fields = JSON.parse(trimmed);
      } catch (error) {
        throw new UsageError(`not valid JSON: ${error.message}`);
      }
    } else {
      fields = parseYamlSubset(text);
    }
    return jobFromFields(fields);
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${source}: ${error.message}`);
    throw error;
  }
}
