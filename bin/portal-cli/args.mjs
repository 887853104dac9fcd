// The command line: which command, its flags and its arguments. One table of commands drives the
// parsing, the per-command checks and the help, so a flag cannot be accepted but undocumented.
import { parseArgs } from 'node:util';
import { EXIT_CODES_HELP, UsageError } from './exit-codes.mjs';
import { parseArraySpec, parseDependency } from './job-file.mjs';

export const JOB_STATES = ['SUBMITTING', 'PENDING', 'RUNNING', 'COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL', 'PREEMPTED'];
/** The states a job does not leave (server/core/scheduler/port.ts FINAL_STATES). */
export const FINAL_STATES = ['COMPLETED', 'FAILED', 'TIMEOUT', 'CANCELLED', 'NODE_FAIL', 'PREEMPTED'];

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
  url: { type: 'string' },
  token: { type: 'string' },
  file: { type: 'string', short: 'f' },
  yes: { type: 'boolean', short: 'y' },
  state: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  interval: { type: 'string' },
  month: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  csv: { type: 'boolean' },
  after: { type: 'string' },
  array: { type: 'string' },
  site: { type: 'string' },
  extract: { type: 'boolean', short: 'x' },
  recursive: { type: 'boolean', short: 'r' },
  stderr: { type: 'boolean' },
  task: { type: 'string' },
  follow: { type: 'boolean' },
  minutes: { type: 'string' },
};
/** Flags every command takes. */
const GLOBAL = ['help', 'json', 'url'];

/**
 * The commands: their words, flags, the arguments they take (`argument: 'ID'`, a job id; or `args`,
 * names with `?` when optional), a usage line and what they do.
 */
export const COMMANDS = {
  login: { flags: ['token'], usage: 'login [--url URL] [--token afp_…]', summary: 'check a personal API token and store it with the portal’s address' },
  logout: { flags: [], usage: 'logout', summary: 'forget the stored token' },
  'jobs submit': {
    flags: ['file', 'yes', 'after', 'array'],
    usage: 'jobs submit --file job.yaml [--after afterok:ID[:ID…]] [--array 0-99%8] [--yes]',
    summary: 'show the estimate, confirm, submit; prints the job id (--after: start once those jobs completed; afterany: ended; afternotok: failed; --array: one task per index, $SLURM_ARRAY_TASK_ID, after % the most at once)',
  },
  'jobs list': { flags: ['state', 'limit', 'all'], usage: 'jobs list [--state STATE] [--limit N] [--all]', summary: 'your tenant’s jobs, newest first (--all follows every page)' },
  'jobs get': { flags: [], argument: 'ID', usage: 'jobs get ID', summary: 'one job: state, resources, times, usage, events' },
  'jobs watch': { flags: ['interval'], argument: 'ID', usage: 'jobs watch ID [--interval SECONDS]', summary: 'print each state change until the job ends; exit 0 only for COMPLETED' },
  'jobs cancel': { flags: [], argument: 'ID', usage: 'jobs cancel ID', summary: 'cancel a job (its unused reservation is released)' },
  'jobs logs': {
    flags: ['stderr', 'task', 'follow'],
    argument: 'ID',
    usage: 'jobs logs ID [--stderr] [--task N] [--follow]',
    summary: 'the last 64 KB of a job’s stdout, whole lines (--stderr: its stderr; --task N: an array task’s); --follow prints what it writes until it ends, then exits as jobs watch does; Ctrl-C stops',
  },
  'files ls': { flags: ['site'], args: ['PROJECT', 'PATH?'], usage: 'files ls PROJECT [PATH] [--site SITE]', summary: 'a folder of the project’s workspace (the whole workspace without PATH), folders first' },
  'files get': {
    flags: ['site', 'extract'],
    args: ['PROJECT', 'REMOTE', 'LOCAL?'],
    usage: 'files get PROJECT REMOTE [LOCAL | -] [--extract] [--site SITE]',
    summary: 'download a file (into LOCAL.part, renamed when whole: run again, it resumes), or a folder as a tar (--extract: unpacked into the folder LOCAL, . by default); - writes to stdout',
  },
  'files put': {
    flags: ['site'],
    args: ['PROJECT', 'LOCAL', 'REMOTE?'],
    usage: 'files put PROJECT LOCAL [REMOTE] [--site SITE]',
    summary: 'upload a file, resumably (killed halfway: run the same command again); prints its SHA-256, which must equal the local file’s',
  },
  'files mkdir': { flags: ['site'], args: ['PROJECT', 'PATH'], usage: 'files mkdir PROJECT PATH [--site SITE]', summary: 'make a folder (the folder above it must exist)' },
  'files mv': { flags: ['site'], args: ['PROJECT', 'FROM', 'TO'], usage: 'files mv PROJECT FROM TO [--site SITE]', summary: 'rename or move a file or folder' },
  'files rm': { flags: ['site', 'recursive'], args: ['PROJECT', 'PATH'], usage: 'files rm PROJECT PATH [--recursive] [--site SITE]', summary: 'delete a file; a folder with everything in it needs --recursive' },
  'sessions list': { flags: [], usage: 'sessions list', summary: 'your interactive sessions (Jupyter notebooks), newest first, with their state and address' },
  'sessions url': { flags: [], argument: 'ID', usage: 'sessions url ID', summary: 'print the address to open a session in the browser (signed in to the portal)' },
  'sessions extend': { flags: ['minutes'], argument: 'ID', usage: 'sessions extend ID --minutes N', summary: 'give a waiting or running session N minutes more, within its partition’s and allocation’s limits; the added time is reserved from the budget' },
  usage: { flags: ['month', 'from', 'to', 'csv'], usage: 'usage --month YYYY-MM [--csv]  |  usage --from YYYY-MM-DD --to YYYY-MM-DD [--csv]', summary: 'usage, cost and energy for a period; --csv writes the usage page’s CSV' },
  allocations: { flags: [], usage: 'allocations', summary: 'your allocations with their balances' },
};

export const HELP = `portal-cli — the AI factory portal from a terminal or a script

Usage: portal-cli <command> [flags]

Commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}\n      ${c.summary}`)
  .join('\n')}

Files: PROJECT is the project's id (\`portal-cli allocations --json\` shows each projectId); paths are
relative to the project's workspace (data/train.jsonl). --site SITE picks the site's workspace; without
it, the project's only site, or the first listed (said on stderr). Progress shows on stderr at a terminal.

Flags for every command:
  --json        machine-readable output on stdout (errors as JSON on stderr)
  --url URL     the portal's address (overrides PORTAL_URL and the stored one)
  -h, --help    this help

Job file (YAML or JSON), the submit form's fields:
  name: nightly fine-tune
  kind: fine_tuning            # training | fine_tuning | inference | batch
  allocationId: 0b7e…          # see \`portal-cli allocations\`
  resourceClassId: h100
  gpus: 8
  nodes: 1                     # optional, 1 by default
  walltimeMinutes: 240
  image: nvcr.io/nvidia/pytorch:24.05-py3
  command: |
    torchrun --nproc-per-node 8 train.py
  env:                         # optional
    WANDB_MODE: offline

Environment:
  PORTAL_URL, PORTAL_TOKEN   override the stored address and token (for CI)
  PORTAL_CLI_CONFIG          where login stores them (default ~/.config/portal-cli/config.json, mode 0600);
                             unfinished uploads and downloads are remembered beside it (uploads.json, downloads.json)

${EXIT_CODES_HELP}
`;

/** The commands of two words: `jobs submit`, `files ls`… */
const GROUPS = ['jobs', 'files', 'sessions'];
const commandsOf = (group) => Object.keys(COMMANDS).filter((c) => c.startsWith(`${group} `));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function positiveInteger(flag, value, max) {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) throw new UsageError(`--${flag} must be a whole number from 1 to ${max}, not "${value}"`);
  return Number(value);
}

/**
 * parseCommandLine reads argv (without node and the script) into { command, options, id }, or
 * { command: 'help', topic } for --help. Throws UsageError for anything it cannot read.
 */
export function parseCommandLine(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error.message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  const { values: options, positionals } = parsed;
  const group = GROUPS.includes(positionals[0]) ? positionals[0] : null;
  const words = group ? 2 : 1;
  const name = positionals.slice(0, words).join(' ');
  const rest = positionals.slice(words);
  if (positionals.length === 0 || positionals[0] === 'help') return { command: 'help', topic: positionals.slice(1).join(' ') || undefined, options };
  const spec = COMMANDS[name];
  if (!spec) {
    if (group && options.help && positionals.length === 1) return { command: 'help', topic: group, options };
    if (group) throw new UsageError(`unknown ${group} command "${positionals[1] ?? ''}": use ${commandsOf(group).join(', ')}`);
    throw new UsageError(`unknown command "${positionals[0]}"`);
  }
  if (options.help) return { command: 'help', topic: name, options };

  const allowed = new Set([...GLOBAL, ...spec.flags]);
  const stray = Object.keys(options).filter((flag) => !allowed.has(flag));
  if (stray.length > 0) throw new UsageError(`${name} does not take ${stray.map((f) => `--${f}`).join(', ')} (usage: portal-cli ${spec.usage})`);
  const required = (spec.args ?? []).filter((a) => !a.endsWith('?')).length;
  const most = spec.argument ? 1 : (spec.args ?? []).length;
  const least = spec.argument ? 1 : required;
  if (rest.length < least || rest.length > most) throw new UsageError(`usage: portal-cli ${spec.usage}`);

  const result = { command: name, options: { ...options } };
  if (spec.argument) {
    if (!UUID.test(rest[0])) throw new UsageError(`"${rest[0]}" is not a job id (a UUID, as \`portal-cli jobs list\` shows)`);
    result.id = rest[0].toLowerCase();
  }
  if (spec.args) {
    result.args = {};
    spec.args.forEach((arg, i) => {
      if (rest[i] !== undefined) result.args[arg.replace('?', '').toLowerCase()] = rest[i];
    });
    if (!UUID.test(result.args.project)) throw new UsageError(`"${result.args.project}" is not a project id (a UUID: \`portal-cli allocations --json\` shows each allocation's projectId)`);
    result.args.project = result.args.project.toLowerCase();
  }
  if (options.site !== undefined && !/^[a-z0-9][a-z0-9-]{0,63}$/.test(options.site)) throw new UsageError(`--site must be a site's id such as de-jena, not "${options.site}"`);
  if (options.task !== undefined) {
    if (!/^\d+$/.test(options.task) || Number(options.task) > 99_999) throw new UsageError(`--task must be an array task's index (a whole number from 0 to 99999), not "${options.task}"`);
    result.options.task = Number(options.task);
  }
  if (name === 'jobs submit' && !options.file) throw new UsageError('jobs submit needs --file job.yaml (or --file - to read it from stdin)');
  if (options.after !== undefined) result.options.after = parseDependency(options.after, '--after');
  if (options.array !== undefined) result.options.array = parseArraySpec(options.array, '--array');
  if (options.limit !== undefined) result.options.limit = positiveInteger('limit', options.limit, 500);
  if (options.interval !== undefined) result.options.interval = positiveInteger('interval', options.interval, 3600);
  if (options.state !== undefined) {
    const state = options.state.toUpperCase();
    if (!JOB_STATES.includes(state)) throw new UsageError(`--state must be one of ${JOB_STATES.join(', ')}`);
    result.options.state = state;
  }
  if (name === 'usage') {
    if (options.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(options.month)) throw new UsageError(`--month must look like 2026-11, not "${options.month}"`);
    for (const flag of ['from', 'to']) if (options[flag] !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(options[flag])) throw new UsageError(`--${flag} must look like 2026-11-01, not "${options[flag]}"`);
    const range = options.from !== undefined || options.to !== undefined;
    if (options.month !== undefined && range) throw new UsageError('give either --month or --from and --to, not both');
    if (options.month === undefined && !(options.from && options.to)) throw new UsageError('usage needs --month YYYY-MM, or --from and --to');
  }
  return result;
}

/** helpFor renders the help for one command, or the whole help. */
export function helpFor(topic) {
  if (GROUPS.includes(topic)) {
    const specs = commandsOf(topic).map((c) => COMMANDS[c]);
    return `Usage:\n${specs.map((c) => `  portal-cli ${c.usage}\n      ${c.summary}`).join('\n')}\n\nMore: portal-cli --help\n`;
  }
  const spec = topic ? COMMANDS[topic] : undefined;
  if (!spec) return HELP;
  return `Usage: portal-cli ${spec.usage}\n\n${spec.summary[0].toUpperCase()}${spec.summary.slice(1)}.\n\n${EXIT_CODES_HELP}\n`;
}
