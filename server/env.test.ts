import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv } from './env.js';

describe('parseEnv', () => {
  it('gives the embedded demo defaults with nothing set', () => {
    const config = parseEnv({});
    expect(config).toMatchObject({ PORTAL_ENV: 'demo', PORTAL_DATA_DIR: '.data', PORT: 3000, SCHEDULER: 'simulated' });
    expect(config.DATABASE_URL).toBeUndefined();
  });
  it('treats an empty DATABASE_URL as unset', () => {
    expect(parseEnv({ DATABASE_URL: '' }).DATABASE_URL).toBeUndefined();
  });
  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ SCHEDULER: 'kubernetes' }, /SCHEDULER: .*simulated.*slurm.*\(got "kubernetes"\)/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL: must be a postgres:\/\//],
    [{ PORTAL_ENV: 'production' }, /NEXTAUTH_SECRET: is required when PORTAL_ENV=production/],
    [{ NEXTAUTH_SECRET: 'short' }, /NEXTAUTH_SECRET: must be at least 32 characters/],
  ])('refuses %o naming the variable', (source, message) => {
    expect(() => parseEnv(source)).toThrow(ConfigError);
    expect(() => parseEnv(source)).toThrow(message);
  });
});
