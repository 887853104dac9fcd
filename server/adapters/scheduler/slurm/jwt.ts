// Slurm JWTs for slurmrestd (auth/jwt): either a token an operator placed in a file (SLURM_REST_TOKEN_FILE,
// e.g. from `scontrol token`), or short-lived tokens minted here from the cluster's HS256 key
// (SLURM_JWT_KEY_FILE, the file slurm.conf's AuthAltParameters=jwt_key= names). Minted tokens are renewed
// well before `exp`, so a call never goes out with a token that expires on the way.
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';

function base64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * mintSlurmToken signs `{exp, iat, sun}` with HS256, the claims slurmctld and slurmdbd check:
 * `sun` is the Slurm user name, `exp` = now + lifespan.
 */
export function mintSlurmToken(key: Buffer, user: string, lifespanSeconds: number, nowSeconds: number): string {
  if (key.length === 0) throw new Error('mintSlurmToken: the key is empty');
  if (user === '') throw new Error('mintSlurmToken: no user');
  if (!Number.isInteger(lifespanSeconds) || lifespanSeconds <= 0) throw new Error(`mintSlurmToken: bad lifespan ${lifespanSeconds}`);
  const iat = Math.floor(nowSeconds);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify({ exp: iat + lifespanSeconds, iat, sun: user }));
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** tokenExpiresAt reads a JWT's `exp` (seconds), without checking the signature; null when it has none. */
export function tokenExpiresAt(token: string): number | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const exp: unknown = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>).exp;
    return typeof exp === 'number' ? exp : null;
  } catch {
    return null;
  }
}

/** tokenExpired tells whether a JWT's `exp` has passed (a token without one is not known to be expired). */
export function tokenExpired(token: string, nowSeconds: number): boolean {
  const exp = tokenExpiresAt(token);
  return exp !== null && exp <= nowSeconds;
}

/** A token getter for createSlurmClient, which can be told to drop its token (after an 'auth' failure). */
export interface SlurmTokenSource {
  (): Promise<string>;
  /** invalidate makes the next call read the token file again, or mint a new token. */
  invalidate(): void;
}

export interface TokenSourceOptions {
  /** A file holding a ready token (SLURM_REST_TOKEN_FILE); wins over keyFile. */
  tokenFile?: string;
  /** The HS256 key to mint from (SLURM_JWT_KEY_FILE). */
  keyFile?: string;
  /** The Slurm user the minted tokens are for (SLURM_REST_USER). */
  user: string;
  /** Lifespan of a minted token (default 30 min); it is renewed at 80 % of it. */
  lifespanSeconds?: number;
  /** The clock, in milliseconds (default Date.now). */
  now?: () => number;
  /** How long a token read from tokenFile is used before the file is read again (default 60 s): operators rotate it. */
  tokenFileRereadSeconds?: number;
}

/** Renew at this share of the lifespan: far enough before exp for slow calls and small clock skew. */
export const RENEW_AT = 0.8;

/**
 * tokenSource returns a getter for the current token: the content of tokenFile (re-read every
 * tokenFileRereadSeconds), else a token minted from keyFile and renewed once 80 % of its lifespan is over.
 * The key file is read once.
 */
export function tokenSource(options: TokenSourceOptions): SlurmTokenSource {
  const { tokenFile, keyFile, user } = options;
  const lifespanSeconds = options.lifespanSeconds ?? 1800;
  const now = options.now ?? Date.now;
  const rereadMs = (options.tokenFileRereadSeconds ?? 60) * 1000;
  if (!tokenFile && !keyFile) throw new Error('Slurm token: set SLURM_REST_TOKEN_FILE or SLURM_JWT_KEY_FILE');
  if (!tokenFile && user === '') throw new Error('Slurm token: SLURM_REST_USER is needed to mint tokens');

  let cached: { token: string; renewAtMs: number } | null = null;
  let key: Buffer | null = null;
  // One read or mint at a time: concurrent calls at renewal share it.
  let pending: Promise<string> | null = null;

  async function fresh(): Promise<string> {
    const at = now();
    if (tokenFile) {
      const token = (await readFile(tokenFile, 'utf8')).trim();
      if (token === '') throw new Error(`Slurm token file ${tokenFile} is empty`);
      cached = { token, renewAtMs: at + rereadMs };
      return token;
    }
    key ??= await readFile(keyFile!);
    const token = mintSlurmToken(key, user, lifespanSeconds, Math.floor(at / 1000));
    cached = { token, renewAtMs: at + lifespanSeconds * RENEW_AT * 1000 };
    return token;
  }

  const source = (async () => {
    if (cached && now() < cached.renewAtMs) return cached.token;
    pending ??= fresh().finally(() => {
      pending = null;
    });
    return pending;
  }) as SlurmTokenSource;
  source.invalidate = () => {
    cached = null;
  };
  return source;
}

/** tokenSourceFromEnv builds the token source from SLURM_REST_TOKEN_FILE / SLURM_JWT_KEY_FILE / SLURM_REST_USER. */
export function tokenSourceFromEnv(env: Record<string, string | undefined>, now?: () => number): SlurmTokenSource {
  const lifespan = env.SLURM_TOKEN_LIFESPAN_SECONDS ? Number(env.SLURM_TOKEN_LIFESPAN_SECONDS) : undefined;
  return tokenSource({
    tokenFile: env.SLURM_REST_TOKEN_FILE || undefined,
    keyFile: env.SLURM_JWT_KEY_FILE || undefined,
    user: env.SLURM_REST_USER ?? '',
    ...(lifespan !== undefined ? { lifespanSeconds: lifespan } : {}),
    ...(now ? { now } : {}),
  });
}
