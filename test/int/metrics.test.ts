/** `GET /metrics` after a tool turn: the counters an operator scrapes have moved. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { connectWs } from '../support/ws-client.ts';
import { fixture } from './mcp-helpers.ts';

const ADMIN = 'metrics-admin-key-0123456789';
const API = 'metrics-client-key-0123456789';

describe('GET /metrics', () => {
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      {
        server: { auth: { apiKey: API, adminKey: ADMIN }, limits: { ws: { points: 2 } } },
        mcpServers: { echo: fixture('echo-server') },
      },
      { modelUrl: sim.url },
    );
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  const scrape = async (key: string) => fetch(`${svc.url}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
  const value = (text: string, series: string) =>
    Number(new RegExp(`^${series.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

  it('needs the admin key and serves the text exposition', async () => {
    expect((await scrape(API)).status).toBe(401);
    const res = await scrape(ADMIN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^agentd_process_cpu_seconds_total /m);
    expect(text).toMatch(/^agentd_nodejs_eventloop_lag_seconds /m);
    expect(value(text, 'agentd_mcp_server_status{server="echo",status="connected"}')).toBe(1);
  });

  it('counts a tool turn: turns, time to first chunk, tools, tokens, model requests, appends, frames, limits', async () => {
    const ws = await connectWs(`${svc.wsUrl}?token=${API}`);
    ws.send({ type: 'message', content: '[[tool:echo {"message":"metered"}]] use it' });
    await ws.next((f) => f.event === 'response');
    ws.send({ type: 'ping' });
    ws.send({ type: 'ping' }); // the third frame of a 2-per-window connection
    await ws.next((f) => f.event === 'error' && f.data.code === 'RATE_LIMIT_EXCEEDED');
    const text = await (await scrape(ADMIN)).text();
    ws.close();
    expect(value(text, 'agentd_turns_started_total')).toBe(1);
    expect(value(text, 'agentd_turns_finished_total{outcome="response"}')).toBe(1);
    expect(value(text, 'agentd_turn_duration_seconds_count{outcome="response"}')).toBe(1);
    expect(value(text, 'agentd_time_to_first_chunk_seconds_count')).toBe(1);
    expect(value(text, 'agentd_tool_calls_total{server="echo",tool="echo",outcome="ok"}')).toBe(1);
    expect(value(text, 'agentd_tool_call_duration_seconds_count{server="echo",tool="echo"}')).toBe(1);
    expect(value(text, 'agentd_model_requests_total{outcome="ok"}')).toBe(2);
    expect(value(text, 'agentd_model_tokens_total{direction="in"}')).toBeGreaterThan(0);
    expect(value(text, 'agentd_store_append_seconds_count')).toBeGreaterThan(0);
    expect(value(text, 'agentd_reply_chunks_total')).toBeGreaterThan(0);
    expect(value(text, 'agentd_websocket_frames_sent_total')).toBeGreaterThan(0);
    expect(value(text, 'agentd_websocket_connections')).toBe(1);
    expect(value(text, 'agentd_rate_limit_rejections_total{surface="ws_message"}')).toBe(1);
  });
});
