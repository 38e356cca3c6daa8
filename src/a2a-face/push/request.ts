/**
 * A push notification's HTTP request, built from the task's config and the delivery's fixed body (pure): POST to the
 * config's URL; `Content-Type` of the version the config was set in (v1.0 `application/a2a+json`, a StreamResponse
 * `{ task }`; v0.3 `application/json`, the bare task); `X-A2A-Notification-Token` when the config has a token;
 * `Authorization: <scheme> <credentials>` when its `authentication` gives both, else `Bearer <agentd's JWT>`.
 */
import type { PushConfig } from '../index.ts';

export interface OutboundRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

export const TOKEN_HEADER = 'X-A2A-Notification-Token';

export function buildPushRequest(config: PushConfig, body: string, jwt: string | undefined): OutboundRequest {
  const auth = config.authentication;
  const authorization =
    auth?.credentials !== undefined && auth.credentials !== ''
      ? `${auth.scheme} ${auth.credentials}`
      : jwt !== undefined
        ? `Bearer ${jwt}`
        : undefined;
  return {
    url: config.url,
    method: 'POST',
    headers: {
      'Content-Type': config.version === '1.0' ? 'application/a2a+json' : 'application/json',
      'User-Agent': 'agentd-a2a-push',
      ...(config.token !== undefined && { [TOKEN_HEADER]: config.token }),
      ...(authorization !== undefined && { Authorization: authorization }),
    },
    body,
  };
}
