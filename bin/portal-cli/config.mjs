// Where the CLI keeps the portal's address and the token: a JSON file only its owner may read
// (0600, in a 0700 folder), written whole and renamed into place so a crash never leaves half a
// token. PORTAL_URL / PORTAL_TOKEN override the file (CI jobs need no file), --url overrides both.
import fs from 'node:fs';
import path from 'node:path';
import { NotSignedInError, UsageError } from './exit-codes.mjs';

/** configPath: $PORTAL_CLI_CONFIG, else $XDG_CONFIG_HOME/portal-cli/config.json, else ~/.config/portal-cli/config.json. */
export function configPath(env, homedir) {
  if (env.PORTAL_CLI_CONFIG) return env.PORTAL_CLI_CONFIG;
  return path.join(env.XDG_CONFIG_HOME || path.join(homedir, '.config'), 'portal-cli', 'config.json');
}

/** readConfig returns the stored { url, token } (empty when there is no file); warns through `warn` if others may read it. */
export function readConfig(file, warn = () => {}) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return {};
    throw new UsageError(`cannot read ${file}: ${error.message}`);
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) warn(`warning: ${file} can be read by others (mode ${mode.toString(8)}); run: chmod 600 ${file}`);
  try {
    const config = JSON.parse(text);
    return { url: typeof config.url === 'string' ? config.url : undefined, token: typeof config.token === 'string' ? config.token : undefined };
  } catch {
    throw new UsageError(`${file} is not valid JSON: fix it or delete it and run \`portal-cli login\` again`);
  }
}

/** writeConfig stores { url, token } in the file, readable by its owner only. */
export function writeConfig(file, config) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temporary, 0o600);
  fs.renameSync(temporary, file);
}

/** removeConfig deletes the stored token; true when there was one. */
export function removeConfig(file) {
  try {
    fs.unlinkSync(file);
    return true;
  } catch (error) {
    if (error.code === 'ENOENT') return false;
    throw error;
  }
}

/** connection picks the portal's address and token: --url, then the environment, then the file. Throws when either is missing. */
export function connection({ urlFlag, env, config }) {
  const url = urlFlag ?? (env.PORTAL_URL || undefined) ?? config.url;
  const token = (env.PORTAL_TOKEN || undefined) ?? config.token;
  if (!url) throw new NotSignedInError('no portal address: run `portal-cli login --url https://portal.example` (or set PORTAL_URL)');
  if (!token) throw new NotSignedInError('not signed in: run `portal-cli login` (or set PORTAL_TOKEN)');
  return { url, token };
}
