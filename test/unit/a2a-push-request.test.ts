/** A push notification's request (src/a2a-face/push/request.ts): headers by the config, the body as given. */
import { describe, expect, it } from 'vitest';
import { buildPushRequest } from '../../src/a2a-face/push/index.ts';

const url = 'https://receiver.example/hook';

describe('buildPushRequest', () => {
  it('v1.0: a2a+json, the token header, and agentd’s JWT as the bearer', () => {
    const r = buildPushRequest({ id: 'c', url, token: 't0k', version: '1.0' }, '{"task":{}}', 'j.w.t');
    expect(r).toEqual({
      url,
      method: 'POST',
      body: '{"task":{}}',
      headers: {
        'Content-Type': 'application/a2a+json',
        'User-Agent': 'agentd-a2a-push',
        'X-A2A-Notification-Token': 't0k',
        Authorization: 'Bearer j.w.t',
      },
    });
  });

  it('the config’s own scheme and credentials take Authorization; v0.3 is plain JSON; no token, no token header', () => {
    const r = buildPushRequest(
      { id: 'c', url, authentication: { scheme: 'Basic', credentials: 'dXNlcjpwdw==' }, version: '0.3' },
      '{}',
      'j.w.t',
    );
    expect(r.headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'agentd-a2a-push',
      Authorization: 'Basic dXNlcjpwdw==',
    });
  });

  it('a scheme without credentials leaves the JWT', () => {
    const r = buildPushRequest({ id: 'c', url, authentication: { scheme: 'Bearer' }, version: '1.0' }, '{}', 'j');
    expect(r.headers.Authorization).toBe('Bearer j');
  });
});
