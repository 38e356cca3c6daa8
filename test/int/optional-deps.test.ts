/**
 * Optional parts load only when configured: the Redis client when the Redis store (or shared
 * limits) is on, OpenTelemetry's SDK and exporter when tracing is on (its small API package is loaded
 * by prom-client either way). Checked in a fresh Node process, which builds, opens and stops the app
 * and then lists the CommonJS modules it loaded: the compiled service (dist/), as users run it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.ts';

const run = promisify(execFile);

const SCRIPT = `
import { createRequire } from 'node:module';
import { pino } from 'pino';
import { createApp } from './dist/src/app.js';
import { parseConfig } from './dist/src/config/index.js';
const config = parseConfig({ llm: { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' }, storage: { type: 'memory' }, server: { tracing: process.argv[1] === 'tracing' } });
const app = createApp(config, { log: pino({ level: 'silent' }), env: {} });
await app.open();
await app.start();
await app.stop();
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify({ redis: loaded.some((f) => f.includes('/node_modules/@redis/')), otel: loaded.some((f) => ['sdk-trace-base', 'exporter-trace-otlp-http', 'resources'].some((p) => f.includes('/node_modules/@opentelemetry/' + p + '/'))) }));
`;

async function loadedBy(mode: 'plain' | 'tracing'): Promise<{ redis: boolean; otel: boolean }> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', SCRIPT, mode], { cwd: ROOT });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { redis: boolean; otel: boolean };
}

describe('optional dependencies', () => {
  it('an agentd without Redis and tracing loads neither the Redis client nor OpenTelemetry', async () => {
    expect(await loadedBy('plain')).toEqual({ redis: false, otel: false });
  });

  it('tracing on loads OpenTelemetry (and still not Redis)', async () => {
    expect(await loadedBy('tracing')).toEqual({ redis: false, otel: true });
  });
});
