#!/usr/bin/env node
// portal-model-server --model ID — a deterministic model server speaking OpenAI's HTTP protocol (issue #29).
//
// It stands in for vLLM, llama.cpp's server or TGI where no real model can run (the demo, the tests, the
// simulated cluster): the same endpoints and shapes, answers drawn from a seeded generator keyed by the
// model and the request, and `usage` counted by one rule the portal's gateway counts with too
// (bin/portal-model-server/tokens.mjs). Plain Node 20, node:http only; see bin/portal-model-server/README.md.
//
// Like the session launcher (bin/portal-session) it is run as an inference job's command: it listens on a
// free port, takes its secret from the environment (never the command line, which other users of a node
// can read) and, once it listens, writes {"host", "port", "model", "pid", "secret"} to the connection file
// (folder 0700, file 0600, written whole by a rename). SIGTERM, SIGINT or SIGUSR1 (the job's end, a stop)
// removes the file and ends it with 0; so does the end of PORTAL_MODEL_PARENT_PID, checked every second.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setInterval, setTimeout } from 'node:timers';
import { createModelServer } from './portal-model-server/server.mjs';

const USAGE = `usage: portal-model-server --model ID [--host ADDRESS] [--port N] [--context-length N]
                           [--token-delay-ms N] [--connection-file PATH]

  --model ID             the one model id served (env PORTAL_MODEL_ID)
  --host ADDRESS         the address to listen on (env PORTAL_MODEL_HOST; default 127.0.0.1)
  --port N               the port; 0 picks a free one (env PORTAL_MODEL_PORT; default 0)
  --context-length N     prompt plus answer, in tokens (env PORTAL_MODEL_CONTEXT_LENGTH; default 8192)
  --token-delay-ms N     milliseconds spent on each answer token (env PORTAL_MODEL_TOKEN_DELAY_MS; default 0)
  --connection-file PATH where to write host, port and secret once listening (env PORTAL_MODEL_CONNECTION_FILE)

Environment: PORTAL_MODEL_SECRET (at least 16 characters; every request but GET /health must send
"Authorization: Bearer <secret>"; without it a fresh secret is made, and only written to the connection
file, so one of the two is required), PORTAL_MODEL_PARENT_PID (end when that process is gone),
PORTAL_NODE_NAME (the host written to the connection file when listening on all addresses).`;

const OPTIONS = {
  model: 'PORTAL_MODEL_ID',
  host: 'PORTAL_MODEL_HOST',
  port: 'PORTAL_MODEL_PORT',
  'context-length': 'PORTAL_MODEL_CONTEXT_LENGTH',
  'token-delay-ms': 'PORTAL_MODEL_TOKEN_DELAY_MS',
  'connection-file': 'PORTAL_MODEL_CONNECTION_FILE',
};
const DEFAULTS = { host: '127.0.0.1', port: '0', 'context-length': '8192', 'token-delay-ms': '0' };
const MIN_SECRET_LENGTH = 16;
const PARENT_CHECK_MS = 1000;

function fail(message) {
  process.stderr.write(`portal-model-server: ${message}\n`);
  process.exit(1);
}

/** readOptions reads the flags (`--name value` or `--name=value`), then the environment, then the defaults. */
function readOptions(argv, env) {
  const flags = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!match || !Object.hasOwn(OPTIONS, match[1])) fail(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    const value = match[2] ?? argv[(i += 1)];
    if (value === undefined) fail(`--${match[1]} needs a value`);
    flags[match[1]] = value;
  }
  const options = {};
  for (const [name, variable] of Object.entries(OPTIONS)) options[name] = flags[name] ?? (env[variable] || undefined) ?? DEFAULTS[name];
  return options;
}

function integerOption(options, name, min, max) {
  const text = options[name];
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) fail(`--${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return value;
}

/**
 * prepareConnectionFolder makes the connection file's folder 0700, or checks that an existing one is the
 * user's own and closed to others: a folder others could write to would let them swap the file.
 */
function prepareConnectionFolder(file) {
  const folder = path.dirname(file);
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  const stat = fs.lstatSync(folder);
  if (!stat.isDirectory()) fail(`${folder} is not a folder`);
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) fail(`${folder} belongs to another user`);
  if ((stat.mode & 0o022) !== 0) fail(`${folder} can be written by others (mode ${(stat.mode & 0o777).toString(8)}); give the connection file a folder of its own`);
}

function writeConnection(file, connection) {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(connection)}\n`, { flag: 'wx', mode: 0o600 });
  fs.renameSync(temporary, file);
}

/**
 * removeConnection removes the file only while it is this server's: a server started again for the job
 * (perhaps with the same secret from the same environment) wrote its own.
 */
function removeConnection(file, secret) {
  try {
    const connection = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (connection.pid === process.pid && connection.secret === secret) fs.unlinkSync(file);
  } catch {
    // Gone already, or not ours to remove.
  }
}

function main() {
  const env = process.env;
  const options = readOptions(process.argv.slice(2), env);
  const model = options.model;
  if (!model) fail(`--model is required\n${USAGE}`);
  if (model.length > 256 || /[\s\p{Cc}]/u.test(model)) fail('--model must be at most 256 characters, without spaces or control characters');
  const port = integerOption(options, 'port', 0, 65535);
  const contextLength = integerOption(options, 'context-length', 2, 10_000_000);
  const tokenDelayMs = integerOption(options, 'token-delay-ms', 0, 60_000);
  const connectionFile = options['connection-file'] ? path.resolve(options['connection-file']) : undefined;
  let secret = env.PORTAL_MODEL_SECRET;
  if (secret !== undefined && secret !== '') {
    if (secret.length < MIN_SECRET_LENGTH || /\s/.test(secret)) fail(`PORTAL_MODEL_SECRET must be at least ${MIN_SECRET_LENGTH} characters, without spaces`);
  } else if (connectionFile) {
    secret = randomBytes(32).toString('base64url');
  } else {
    fail('PORTAL_MODEL_SECRET is not set and there is no --connection-file to write a fresh secret to');
  }
  // The connection file and its folder are the user's alone, whatever the job's umask.
  process.umask(0o077);
  if (connectionFile) prepareConnectionFolder(connectionFile);

  const server = createModelServer({
    model,
    secret,
    tokenDelayMs,
    contextLength,
    log: (record) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...record })}\n`),
  });

  let stopping = false;
  const stop = (reason) => {
    if (stopping) return;
    stopping = true;
    if (connectionFile) removeConnection(connectionFile, secret);
    process.stderr.write(`portal-model-server: stopping (${reason})\n`);
    // Requests under way are cut: their clients see the connection close (a gateway retries one that had no byte yet).
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGUSR1']) process.on(signal, () => stop(signal));

  server.on('error', (error) => fail(`cannot listen on ${options.host}:${port}: ${error.message}`));
  server.listen(port, options.host, () => {
    if (stopping) return;
    const address = server.address();
    const listenedPort = typeof address === 'object' && address !== null ? address.port : port;
    // The portal connects by the node's name, as it does for sessions: the one it gave us (PORTAL_NODE_NAME:
    // the simulated cluster's node, whatever address that stands for), else, listening on all addresses,
    // Slurm's or the host's name; else the address listened on.
    const wildcard = options.host === '0.0.0.0' || options.host === '::';
    const host = env.PORTAL_NODE_NAME || (wildcard ? env.SLURMD_NODENAME || os.hostname() : options.host);
    if (connectionFile) {
      try {
        writeConnection(connectionFile, { host, port: listenedPort, model, pid: process.pid, secret });
      } catch (error) {
        fail(`cannot write ${connectionFile}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    process.stdout.write(`portal-model-server: ${model} is ready on ${host}:${listenedPort}\n`);
  });

  // Started by the portal itself (the simulated cluster): end with it, should it die without stopping us.
  const parent = Number(env.PORTAL_MODEL_PARENT_PID);
  if (Number.isInteger(parent) && parent > 1) {
    // A direct child also notices a pid reused by another process: its parent changes.
    const childOfParent = process.ppid === parent;
    setInterval(() => {
      let alive = true;
      try {
        process.kill(parent, 0);
      } catch (error) {
        alive = !(error instanceof Error && 'code' in error && error.code === 'ESRCH');
      }
      if (!alive || (childOfParent && process.ppid !== parent)) stop('the parent process is gone');
    }, PARENT_CHECK_MS).unref();
  }
}

main();
