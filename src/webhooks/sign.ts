/**
 * Standard Webhooks signing (standardwebhooks.com): `webhook-signature: v1,<base64 HMAC-SHA256>` of
 * `<webhook-id>.<webhook-timestamp>.<body>` under the secret's bytes (the base64 after `whsec_`). The timestamp is
 * the attempt's own (seconds), so a receiver's tolerance window holds for a retry an hour later.
 */
import { createHmac } from 'node:crypto';

export function signedHeaders(secret: string, id: string, at: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const timestamp = String(Math.floor(at / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
