// Password hashing with scrypt (memory-hard, in Node's crypto): no native add-on to build.
// Format: scrypt$N$r$p$salt$hash (base64url), so parameters can be raised later.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(password.normalize('NFKC'), salt, KEY_LENGTH, { ...options, maxmem: 256 * options.N! * options.r! }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** hashPassword derives a salted scrypt hash of a password. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, { N, r: R, p: P });
  return ['scrypt', N, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * verifyPassword checks a password against a stored hash in constant time. An account without a
 * password (one that signs in through single sign-on only) is checked against a dummy hash and refused,
 * in the same time.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (stored === null) {
    await verifyPassword(password, DUMMY_PASSWORD_HASH);
    return false;
  }
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

// A fixed hash to verify against when the e-mail is unknown, so timing does not reveal which accounts exist.
export const DUMMY_PASSWORD_HASH =
  'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$ZHVtbXlkdW1teWR1bW15ZHVtbXlkdW1teWR1bW15ZHU';
