/**
 * No secret in any output. Secrets are generated for every place the config allows one (the model
 * key, the API and admin keys, a stdio server's env and secret args, an http server's URL
 * credentials, query token and header values, a key-shaped value) and for servers connected at
 * runtime; a scripted session then makes every kind of output happen (log lines at debug, REST
 * bodies, WebSocket frames, health, the config export, server errors carrying a child's stderr and
 * a URL, failed tool calls, failed turns), and none of it may contain any of the secrets, nor their base64 forms.
 * A chat principal sees a failed server's status and a generic text, never its stderr (issue 57 item 6).
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/config/redact.ts';
import { parseConfig } from '../../src/config/index.ts';
import { createLogger } from '../../src/log/index.ts';
import { SERVER_ERROR_SHOWN } from '../../src/http/server-view.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs, type WsClient } from '../support/ws-client.ts';
import { fixturePath, freePort } from './mcp-helpers.ts';

const secret = (label: string) => `${label}${randomBytes(12).toString('hex')}`;
const S = {
  modelKey: `sk-${randomBytes(16).toString('hex')}`,
  apiKey: secret('apikey'),
  adminKey: secret('adminkey'),
  env: secret('envvalue'),
  argEq: secret('argeq'),
  argNext: secret('argnext'),
  urlPass: secret('urlpass'),
  urlToken: secret('urltoken'),
  header: secret('headervalue'),
  keyShaped: `sk-${randomBytes(16).toString('hex')}`,
  runtimeEnv: secret('runtimeenv'),
  runtimePass: secret('runtimepass'),
};

describe('no secret in any output', () => {
  let sim: Simulator;
  let svc: RunningApp;
  let ws: WsClient;
  const outputs: string[] = [];
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
  const call = async (method: string, path: string, body?: unknown, key = S.adminKey) => {
    const res = await fetch(`${svc.url}${path}`, {
      method,
      headers: { ...bearer(key), ...(body !== undefined && { 'Content-Type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    outputs.push(text, JSON.stringify([...res.headers]));
    return text;
  };

  beforeAll(async () => {
    sim = await startSimulator({ apiKey: S.modelKey });
    const closed = await freePort();
    const doc = {
      llm: { apiKey: S.modelKey },
      server: {
        auth: { apiKey: S.apiKey, adminKey: S.adminKey },
        limits: { rest: { points: 10_000 } },
        cors: { headers: ['Content-Type', 'Authorization', 'X-Trace'] },
      },
      mcpServers: {
        leaky: {
          type: 'stdio',
          command: process.execPath,
          args: [fixturePath('leaky-server'), `--api-key=${S.argEq}`, '--token', S.argNext],
          env: { SECRET_TOKEN: S.env },
        },
        remote: {
          type: 'http',
          baseUrl: `http://user:${S.urlPass}@127.0.0.1:${closed}/mcp?api_key=${S.urlToken}`,
          headers: { 'X-Custom': S.header },
          timeout: 2000,
        },
        echo: {
          type: 'stdio',
          command: process.execPath,
          args: [fixturePath('echo-server')],
          env: { OTHER: S.keyShaped },
        },
      },
    };
    const parsed = parseConfig({
      ...doc,
      llm: { provider: 'openai-compatible', baseURL: sim.url, model: 'sim-model', ...doc.llm },
    });
    const redactor = createRedactor(parsed);
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (outputs.push(chunk.toString()), done()) });
    const log = createLogger('debug', sink, redactor.redact);
    svc = await startApp(doc, { modelUrl: sim.url, deps: { log, redactor } });
    ws = await connectWs(`${svc.wsUrl}?token=${S.apiKey}`);
  });
  afterAll(async () => {
    ws?.close();
    await svc?.stop();
    await sim?.close();
  });

  it('keeps every generated secret out of logs, REST bodies, frames, health and the config export', async () => {
    await call('GET', '/api/health');
    await call('GET', '/api/mcp/servers');
    const exported = await call('GET', '/api/config.yaml');
    expect(exported).toContain('X-Trace'); // header names are no secrets
    await call('POST', '/api/mcp/servers/leaky/restart');
    await call('POST', '/api/mcp/servers/remote/restart');
    await call('POST', '/api/connect-server', {
      name: 'late-leaky',
      config: {
        type: 'stdio',
        command: process.execPath,
        args: [fixturePath('leaky-server')],
        env: { SECRET_TOKEN: S.runtimeEnv },
      },
    });
    await call('POST', '/api/connect-server', {
      name: 'late-remote',
      config: { type: 'http', baseUrl: `http://u:${S.runtimePass}@127.0.0.1:${await freePort()}/mcp` },
    });
    await call('POST', '/api/mcp/servers/leaky/tools/x/execute', {});
    await call('POST', '/api/message-sync', { message: '[[tool:echo {"message":"hi"}]]' }, S.apiKey);
    await call('POST', '/api/message-sync', { message: '[[error:500 times=1]] fail once' }, S.apiKey);
    ws.send({ type: 'message', content: 'over the socket' });
    await ws.next((f) => f.event === 'response');
    outputs.push(...ws.frames.map((f) => JSON.stringify(f)));
    expect(ws.frames.some((f) => f.event === 'mcpServerStatus' && f.data.status === 'error')).toBe(true);

    const everything = outputs.join('\n');
    expect(everything).toContain('starting with token [REDACTED] ([REDACTED])'); // the child's stderr, redacted
    for (const [name, value] of Object.entries(S)) {
      expect(everything.includes(value), `${name} leaked`).toBe(false);
      expect(everything.includes(Buffer.from(value).toString('base64')), `${name} leaked in base64`).toBe(false);
    }
    expect(everything).toContain('127.0.0.1'); // the URL credentials at 127.0.0.1 did not make the host a secret
  }, 30_000);

  it("shows a chat principal a failed server's status and a generic text, never its stderr (admins see it)", async () => {
    type Servers = { servers: { name: string; status: string; error?: string }[] };
    const leaky = async (key: string) =>
      (JSON.parse(await call('GET', '/api/mcp/servers', undefined, key)) as Servers).servers.find(
        (s) => s.name === 'leaky',
      );
    // It dies at every attempt (retried in between): its record while in error.
    await expect.poll(async () => (await leaky(S.adminKey))?.error, { timeout: 15_000 }).toMatch(/starting with token/);
    await expect
      .poll(() => leaky(S.apiKey), { timeout: 15_000 })
      .toMatchObject({ status: 'error', error: SERVER_ERROR_SHOWN });
    // The chat connection's mcpServerStatus frames: the same generic text.
    const statuses = ws.frames.filter((f) => f.event === 'mcpServerStatus' && f.data.error !== undefined);
    expect(statuses.length).toBeGreaterThan(0);
    for (const f of statuses) expect(f.data.error).toBe(SERVER_ERROR_SHOWN);
  });
});
