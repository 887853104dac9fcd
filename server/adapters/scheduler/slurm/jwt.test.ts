import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mintSlurmToken, tokenExpired, tokenExpiresAt, tokenSource, tokenSourceFromEnv } from './jwt';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');

function decode(token: string): { header: unknown; payload: unknown } {
  const [header, payload] = token.split('.');
  return { header: JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')), payload: JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) };
}

// Checked with WebCrypto rather than node:crypto's createHmac, which minted it.
async function verifies(token: string, key: Buffer): Promise<boolean> {
  const [header, payload, signature] = token.split('.');
  const cryptoKey = await crypto.subtle.importKey('raw', new Uint8Array(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  return crypto.subtle.verify('HMAC', cryptoKey, new Uint8Array(Buffer.from(signature!, 'base64url')), new TextEncoder().encode(`${header}.${payload}`));
}

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'slurm-jwt-'));
}

describe('mintSlurmToken', () => {
  it('signs {exp, iat, sun} with HS256', async () => {
    const token = mintSlurmToken(KEY, 'portal', 1800, 1_800_000_000);
    expect(decode(token)).toEqual({ header: { alg: 'HS256', typ: 'JWT' }, payload: { exp: 1_800_001_800, iat: 1_800_000_000, sun: 'portal' } });
    expect(await verifies(token, KEY)).toBe(true);
    expect(await verifies(token, Buffer.from('another key, another signature..'))).toBe(false);
    expect(token).not.toMatch(/[=+/]/);
  });

  it('tells when a token expires', () => {
    const token = mintSlurmToken(KEY, 'portal', 60, 1_000);
    expect(tokenExpiresAt(token)).toBe(1_060);
    expect(tokenExpired(token, 1_059)).toBe(false);
    expect(tokenExpired(token, 1_060)).toBe(true);
    expect(tokenExpiresAt('not a jwt')).toBeNull();
    expect(tokenExpired('a.b.c', 9e9)).toBe(false);
  });

  it('refuses an empty key, user or lifespan', () => {
    expect(() => mintSlurmToken(Buffer.alloc(0), 'portal', 60, 0)).toThrow(/key/);
    expect(() => mintSlurmToken(KEY, '', 60, 0)).toThrow(/user/);
    expect(() => mintSlurmToken(KEY, 'portal', 0, 0)).toThrow(/lifespan/);
  });
});

describe('tokenSource', () => {
  it('mints from the key file and renews at 80 % of the lifespan', async () => {
    const dir = tempDir();
    const keyFile = path.join(dir, 'jwt_hs256.key');
    writeFileSync(keyFile, KEY);
    let nowMs = 1_800_000_000_000;
    const source = tokenSource({ keyFile, user: 'portal', lifespanSeconds: 100, now: () => nowMs });
    const first = await source();
    expect(decode(first).payload).toEqual({ iat: 1_800_000_000, exp: 1_800_000_100, sun: 'portal' });
    expect(await verifies(first, KEY)).toBe(true);
    nowMs += 79_999;
    expect(await source()).toBe(first);
    nowMs += 1;
    const second = await source();
    expect(second).not.toBe(first);
    expect(decode(second).payload).toEqual({ iat: 1_800_000_080, exp: 1_800_000_180, sun: 'portal' });
  });

  it('concurrent calls at renewal share one token', async () => {
    const dir = tempDir();
    const keyFile = path.join(dir, 'key');
    writeFileSync(keyFile, KEY);
    let nowMs = 0;
    const source = tokenSource({ keyFile, user: 'portal', now: () => nowMs });
    const [a, b] = await Promise.all([source(), source()]);
    expect(a).toBe(b);
    nowMs = 1_000;
    source.invalidate();
    const c = await source();
    expect(decode(c).payload).toMatchObject({ iat: 1 });
  });

  it('uses the token file and reads it again after a while or when invalidated', async () => {
    const dir = tempDir();
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, 'tok-1\n');
    let nowMs = 0;
    const source = tokenSource({ tokenFile, keyFile: path.join(dir, 'no-such-key'), user: 'portal', now: () => nowMs, tokenFileRereadSeconds: 10 });
    expect(await source()).toBe('tok-1');
    writeFileSync(tokenFile, 'tok-2');
    nowMs = 9_999;
    expect(await source()).toBe('tok-1');
    nowMs = 10_000;
    expect(await source()).toBe('tok-2');
    writeFileSync(tokenFile, 'tok-3');
    source.invalidate();
    expect(await source()).toBe('tok-3');
  });

  it('fails on an empty token file or a missing key, and needs one of the two', async () => {
    const dir = tempDir();
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, '  \n');
    await expect(tokenSource({ tokenFile, user: 'portal' })()).rejects.toThrow(/empty/);
    await expect(tokenSource({ keyFile: path.join(dir, 'missing'), user: 'portal' })()).rejects.toThrow(/ENOENT/);
    expect(() => tokenSource({ user: 'portal' })).toThrow(/SLURM_REST_TOKEN_FILE or SLURM_JWT_KEY_FILE/);
    expect(() => tokenSource({ keyFile: 'k', user: '' })).toThrow(/SLURM_REST_USER/);
  });

  it('reads its configuration from the environment', async () => {
    const dir = tempDir();
    const keyFile = path.join(dir, 'key');
    writeFileSync(keyFile, KEY);
    const source = tokenSourceFromEnv({ SLURM_JWT_KEY_FILE: keyFile, SLURM_REST_USER: 'svc', SLURM_TOKEN_LIFESPAN_SECONDS: '600' }, () => 5_000);
    expect(decode(await source()).payload).toEqual({ iat: 5, exp: 605, sun: 'svc' });
  });
});
