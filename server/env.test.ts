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
  it('reads the Slurm settings, the partition map as a record', () => {
    const config = parseEnv({ SCHEDULER: 'slurm', SLURM_REST_URL: 'http://h:6820', SLURM_CLUSTER: 'ci', SLURM_PARTITIONS: 'h100=gpu,b200=b200', SLURM_JWT_KEY_FILE: '/k' });
    expect(config).toMatchObject({ SLURM_PARTITIONS: { h100: 'gpu', b200: 'b200' }, SLURM_REST_USER: 'portal', SLURM_POLL_SECONDS: 5, SLURM_JOB_LAUNCHER: 'apptainer' });
  });
  it('reads several Slurm clusters, each with its sites, URL, partitions and credentials, in place of the single ones', () => {
    const clusters = [
      { cluster: 'jena', sites: ['de-jena'], restUrl: 'http://jena:6820', partitions: 'h100=gpu', jwtKeyFile: '/jena.key' },
      { cluster: 'kajaani', sites: ['fi-kajaani'], restUrl: 'http://kajaani:6820', partitions: 'b200=gpu' },
    ];
    const config = parseEnv({ SCHEDULER: 'slurm', SLURM_CLUSTERS: JSON.stringify(clusters), SLURM_JWT_KEY_FILE: '/shared.key' });
    expect(config.SLURM_CLUSTERS).toEqual([
      { cluster: 'jena', sites: ['de-jena'], restUrl: 'http://jena:6820', partitions: { h100: 'gpu' }, jwtKeyFile: '/jena.key' },
      { cluster: 'kajaani', sites: ['fi-kajaani'], restUrl: 'http://kajaani:6820', partitions: { b200: 'gpu' } },
    ]);
    expect(() => parseEnv({ SCHEDULER: 'slurm', SLURM_CLUSTERS: JSON.stringify([clusters[0], { ...clusters[1], sites: ['de-jena'] }]), SLURM_JWT_KEY_FILE: '/k' })).toThrow(/SLURM_CLUSTERS: a site may belong to one cluster only/);
    expect(() => parseEnv({ SCHEDULER: 'slurm', SLURM_CLUSTERS: '[{"cluster":"x"}]', SLURM_JWT_KEY_FILE: '/k' })).toThrow(/SLURM_CLUSTERS/);
    expect(() => parseEnv({ SCHEDULER: 'slurm', SLURM_CLUSTERS: 'jena' })).toThrow(/SLURM_CLUSTERS: must be a JSON array of clusters/);
    // Without a shared key, every cluster must bring its own.
    expect(() => parseEnv({ SCHEDULER: 'slurm', SLURM_CLUSTERS: JSON.stringify(clusters) })).toThrow(/SLURM_JWT_KEY_FILE: set exactly one of/);
  });
  it.each([
    [{ PORT: 'eighty' }, /PORT/],
    [{ SCHEDULER: 'kubernetes' }, /SCHEDULER: .*simulated.*slurm.*\(got "kubernetes"\)/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL: must be a postgres:\/\//],
    [{ PORTAL_ENV: 'production' }, /NEXTAUTH_SECRET: is required when PORTAL_ENV=production/],
    [{ PORTAL_ENV: 'production', NEXTAUTH_SECRET: 'x'.repeat(32) }, /PORTAL_URL: is required when PORTAL_ENV=production/],
    [{ NEXTAUTH_SECRET: 'short' }, /NEXTAUTH_SECRET: must be at least 32 characters/],
    [{ SCHEDULER: 'slurm' }, /SLURM_REST_URL: is required when SCHEDULER=slurm/],
    [{ SCHEDULER: 'slurm', SLURM_REST_URL: 'http://h:6820', SLURM_CLUSTER: 'ci', SLURM_PARTITIONS: 'h100=gpu' }, /SLURM_JWT_KEY_FILE: set exactly one of/],
    [{ SLURM_PARTITIONS: 'h100' }, /SLURM_PARTITIONS: must be class=partition pairs/],
    [{ SLURM_JOB_LAUNCHER: 'docker' }, /SLURM_JOB_LAUNCHER/],
  ])('refuses %o naming the variable', (source, message) => {
    expect(() => parseEnv(source)).toThrow(ConfigError);
    expect(() => parseEnv(source)).toThrow(message);
  });

  it('reads OIDC_PROVIDERS with their defaults, and none when unset', () => {
    expect(parseEnv({}).OIDC_PROVIDERS).toEqual([]);
    const [kc] = parseEnv({ OIDC_PROVIDERS: JSON.stringify([{ id: 'kc', name: 'Keycloak', issuer: 'https://sso.example.org/realms/hpc/', clientId: 'portal', clientSecret: 's3cret' }]) }).OIDC_PROVIDERS;
    expect(kc).toEqual({
      id: 'kc',
      name: 'Keycloak',
      issuer: 'https://sso.example.org/realms/hpc',
      clientId: 'portal',
      clientSecret: 's3cret',
      scopes: 'openid email profile',
      claims: { email: 'email', name: 'name', entitlements: 'eduPersonEntitlement' },
      entitlements: [],
    });
  });
  const provider = { id: 'kc', name: 'Keycloak', issuer: 'https://sso.example.org', clientId: 'portal', clientSecret: 'never-printed' };
  it.each([
    ['[{', /OIDC_PROVIDERS: must be a JSON array/],
    [JSON.stringify(provider), /OIDC_PROVIDERS: .*expected array/],
    [JSON.stringify([{ ...provider, id: 'Key Cloak' }]), /OIDC_PROVIDERS\.0\.id: id must be lower-case/],
    [JSON.stringify([{ ...provider, id: 'credentials' }]), /OIDC_PROVIDERS\.0\.id: id is reserved/],
    [JSON.stringify([provider, provider]), /OIDC_PROVIDERS: provider ids must be unique/],
    [JSON.stringify([{ ...provider, issuer: 'sso.example.org' }]), /OIDC_PROVIDERS\.0\.issuer/],
    [JSON.stringify([{ ...provider, scopes: 'email profile' }]), /scopes must include openid/],
    [JSON.stringify([{ ...provider, entitlements: [{ value: 'urn:x', org: 'Lab', role: 'admin' }] }]), /OIDC_PROVIDERS\.0\.entitlements\.0\.role/],
  ])('refuses OIDC_PROVIDERS=%s naming the variable and never printing the secret', (value, message) => {
    expect(() => parseEnv({ OIDC_PROVIDERS: value })).toThrow(message);
    expect(() => parseEnv({ OIDC_PROVIDERS: value })).not.toThrow(/never-printed/);
  });
});

describe('monitoring settings', () => {
  it('leaves METRICS_TOKEN and LOG_LEVEL unset by default and reads them when given', () => {
    const defaults = parseEnv({ METRICS_TOKEN: '', LOG_LEVEL: '' });
    expect(defaults.METRICS_TOKEN).toBeUndefined();
    expect(defaults.LOG_LEVEL).toBeUndefined();
    expect(parseEnv({ METRICS_TOKEN: 'a-long-enough-metrics-secret', LOG_LEVEL: 'warn' })).toMatchObject({ METRICS_TOKEN: 'a-long-enough-metrics-secret', LOG_LEVEL: 'warn' });
  });

  it('refuses a short METRICS_TOKEN without printing it, and an unknown LOG_LEVEL', () => {
    expect(() => parseEnv({ METRICS_TOKEN: 'short-secret' })).toThrow(/METRICS_TOKEN: must be at least 16 characters/);
    expect(() => parseEnv({ METRICS_TOKEN: 'short-secret' })).not.toThrow(/short-secret/);
    expect(() => parseEnv({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL/);
  });
});
