import { describe, expect, it } from 'vitest';
import { requestBaseUrl } from './request-base';

const address = (host: string | null, extra: { forwardedHost?: string; forwardedProto?: string; protocol?: string } = {}) => ({
  host,
  forwardedHost: extra.forwardedHost ?? null,
  forwardedProto: extra.forwardedProto ?? null,
  protocol: extra.protocol ?? 'http:',
});

describe('requestBaseUrl', () => {
  it.each([
    ['the host the request came to', address('demo.example.org:3150'), false, 'http://demo.example.org:3150'],
    ['upper case, lowered', address('Demo.Example.ORG'), false, 'http://demo.example.org'],
    ['an IPv6 literal', address('[::1]:3000'), false, 'http://[::1]:3000'],
    ['https when the server was reached so', address('portal.test', { protocol: 'https:' }), false, 'https://portal.test'],
    ['forwarded host and proto from a trusted proxy', address('10.0.0.5:3000', { forwardedHost: 'portal.example.org', forwardedProto: 'https' }), true, 'https://portal.example.org'],
    ['forwarded headers ignored without a trusted proxy', address('10.0.0.5:3000', { forwardedHost: 'evil.example', forwardedProto: 'https' }), false, 'http://10.0.0.5:3000'],
  ])('takes %s', (_name, input, trustProxy, expected) => {
    expect(requestBaseUrl(input, trustProxy)).toBe(expected);
  });

  it.each([
    ['no host', address(null)],
    ['a path smuggled in', address('evil.example/reset')],
    ['user info', address('user@evil.example')],
    ['a second address', address('evil.example portal.test')],
    ['a scheme', address('https://evil.example')],
    ['a query', address('portal.test?x=1')],
  ])('refuses %s', (_name, input) => {
    expect(requestBaseUrl(input, true)).toBeNull();
  });
});
