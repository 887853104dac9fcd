#!/usr/bin/env node
// portal-cli: the AI factory portal's command-line client (`npx portal-cli --help`, `npm run cli -- --help`).
// Plain Node 20, no build step: it only speaks the REST API at <portal>/api/v1. One dependency, loaded
// by `files put` alone: tus-js-client, for resumable uploads.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import readline from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { clientFactory, main } from './portal-cli/main.mjs';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** promptSecret reads a line from the terminal without echoing it (the token). */
function promptSecret(question) {
  return new Promise((resolve) => {
    const input = process.stdin;
    process.stderr.write(question);
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.resume();
    let secret = '';
    const onData = (chunk) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          input.setRawMode(false);
          input.pause();
          input.off('data', onData);
          process.stderr.write('\n');
          resolve(secret);
          return;
        }
        if (char === '\u0003') {
          input.setRawMode(false);
          process.stderr.write('\n');
          process.exit(130);
        }
        if (char === '\u007f' || char === '\b') secret = secret.slice(0, -1);
        else secret += char;
      }
    };
    input.on('data', onData);
  });
}

async function confirm(question) {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

/** onInterrupt lets a command stop cleanly on Ctrl-C (`jobs logs --follow`); a second Ctrl-C ends the process at once. */
function onInterrupt(handler) {
  let pressed = false;
  const listener = () => {
    if (pressed) process.exit(130);
    pressed = true;
    handler();
  };
  process.on('SIGINT', listener);
  return () => process.off('SIGINT', listener);
}

const io = {
  stdout: process.stdout,
  stderr: process.stderr,
  stdinIsTTY: Boolean(process.stdin.isTTY),
  stderrIsTTY: Boolean(process.stderr.isTTY),
  env: process.env,
  homedir: os.homedir(),
  now: () => new Date(),
  // An aborted sleep (Ctrl-C) just ends early; the command looks at its signal.
  sleep: (ms, signal) => sleep(ms, undefined, signal ? { signal } : undefined).catch((error) => {
    if (error?.name !== 'AbortError') throw error;
  }),
  onInterrupt,
  randomUUID,
  readFile: (file) => fs.readFileSync(file, 'utf8'),
  readStdin,
  promptSecret,
  confirm,
  client: clientFactory({}),
};

process.exitCode = await main(process.argv.slice(2), io);
