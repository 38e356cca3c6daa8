import { stringify } from 'yaml';
import { createRedactor, REDACTED } from './redact.ts';
import type { AgentConfig } from './schema.ts';

export { REDACTED };

/** Keys whose values are secrets wherever they appear. */
const SECRET_KEY =
  /(api[-_]?key|admin[-_]?key|secret|token|password|passwd|credential|authorization|private[-_]?key|^key$)/i;
/** Keys whose every child value is a secret (process env, HTTP headers). */
const SECRET_MAPS = new Set(['env', 'headers']);
/** Values that look like credentials even under an innocent key (an auth scheme is case-insensitive: RFC 9110). */
const SECRET_VALUE = /^(sk-|sk_|pk_|ghp_|gho_|xox[abp]-|AKIA|[Bb][Ee][Aa][Rr][Ee][Rr]\s)|^[A-Za-z0-9_-]{32,}$/;
/** Credentials inside URLs: `scheme://user:pass@host` and `?key=value` style query secrets. */
const URL_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/i;
const QUERY_SECRET = /([?&][^=&#]*(?:key|token|secret|password)[^=&#]*=)[^&#]*/gi;

function redact(value: unknown, key: string, underSecretMap: boolean): unknown {
  if (typeof value === 'string') {
    if (underSecretMap || SECRET_KEY.test(key) || SECRET_VALUE.test(value)) return REDACTED;
    return value.replace(URL_USERINFO, `$1${REDACTED}@`).replace(QUERY_SECRET, `$1${REDACTED}`);
  }
  // A list under `headers` (server.cors.headers) holds header names, which are no secrets.
  if (Array.isArray(value)) return value.map((v) => redact(v, key, underSecretMap));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        redact(v, k, underSecretMap || (SECRET_MAPS.has(k) && !Array.isArray(v))),
      ]),
    );
  }
  return value;
}

/**
 * YAML of the running config for `GET /api/config.yaml`, every secret replaced: judged by where a value stands
 * (keys, `env`, headers, URLs), then by the one redaction.
 */
export function exportConfigYaml(config: AgentConfig): string {
  const { version, ...rest } = createRedactor(config).deep(redact(config, '', false) as Record<string, unknown>);
  return stringify({ version, ...rest });
}
