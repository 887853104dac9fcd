// The CLI's one entry: read the command line, run the command, turn any error into a message on
// stderr and a documented exit code. The io (streams, environment, fetch, clock, prompts) comes in
// as a value, so the tests drive the whole CLI without a terminal, a network or a clock.
import { ApiError, createClient } from './api.mjs';
import { helpFor, parseCommandLine } from './args.mjs';
import * as commands from './commands.mjs';
import { configPath, connection, readConfig } from './config.mjs';
import { EXIT, UsageError, exitCodeFor } from './exit-codes.mjs';
import * as files from './files.mjs';

const HANDLERS = {
  login: commands.login,
  logout: commands.logout,
  'jobs submit': commands.jobsSubmit,
  'jobs list': commands.jobsList,
  'jobs get': commands.jobsGet,
  'jobs watch': commands.jobsWatch,
  'jobs cancel': commands.jobsCancel,
  'jobs logs': commands.jobsLogs,
  'files ls': files.filesLs,
  'files get': files.filesGet,
  'files put': files.filesPut,
  'files mkdir': files.filesMkdir,
  'files mv': files.filesMv,
  'files rm': files.filesRm,
  'sessions list': commands.sessionsList,
  'sessions url': commands.sessionsUrl,
  'sessions extend': commands.sessionsExtend,
  usage: commands.usage,
  allocations: commands.allocations,
};

/** errorText renders an error for a person: "error: message (field: …)" and what to do next. */
export function errorText(error) {
  let text = `error: ${error.message}`;
  if (error instanceof ApiError) {
    // The portal's message may already name its fields ("limit: …"); each is said once.
    const fields = Object.entries(error.fields ?? {}).filter(([field, message]) => !error.message.includes(`${field}: ${message}`));
    if (fields.length > 0) text += ` (${fields.map(([field, message]) => `${field}: ${message}`).join('; ')})`;
    if (error.status === 401) text += '\nThe token was not accepted (unknown, expired or revoked): run `portal-cli login` with a valid one.';
    if (error.status === 403) text += '\nThe token’s scopes do not allow this: create a token with the scope needed on your profile page, then run `portal-cli login`.';
    if (error.status === 429 && error.retryAfterSeconds !== undefined) text += `\nToo many requests: try again in ${error.retryAfterSeconds} s.`;
    if (error.requestId) text += `\n(request id ${error.requestId})`;
  }
  if (error instanceof UsageError) text += '\nSee `portal-cli --help`.';
  return `${text}\n`;
}

/** errorJson renders an error for a script: the API's error shape plus the HTTP status and the exit code. */
export function errorJson(error, exitCode) {
  const api = error instanceof ApiError ? { code: error.code, fields: error.fields, requestId: error.requestId, status: error.status } : { code: error.name === 'Error' ? 'ERROR' : error.name };
  return `${JSON.stringify({ error: { ...api, message: error.message, exitCode } })}\n`;
}

/** main runs the CLI with argv (without node and the script) and returns the exit code. */
export async function main(argv, io) {
  const json = argv.includes('--json');
  try {
    const cli = parseCommandLine(argv);
    if (cli.command === 'help') {
      io.stdout.write(helpFor(cli.topic));
      return EXIT.OK;
    }
    const warn = (message) => io.stderr.write(`${message}\n`);
    let api;
    const client = () => {
      if (!api) {
        const config = readConfig(configPath(io.env, io.homedir), warn);
        api = io.client(connection({ urlFlag: cli.options.url, env: io.env, config }));
      }
      return api;
    };
    return await HANDLERS[cli.command]({ io, options: cli.options, id: cli.id, args: cli.args, client, warn });
  } catch (error) {
    const code = exitCodeFor(error);
    io.stderr.write(json ? errorJson(error, code) : errorText(error));
    if (code === EXIT.FAILED && !(error instanceof ApiError) && io.env.PORTAL_CLI_DEBUG) io.stderr.write(`${error.stack}\n`);
    return code;
  }
}

/** clientFactory is the io's way to make an API client (the tests pass a fake fetch and sleep through it). */
export const clientFactory = (extra) => (target) => createClient({ ...target, ...extra });
