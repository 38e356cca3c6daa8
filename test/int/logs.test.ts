/** Logs a person can read: `--log-format pretty` lines, JSON when not on a terminal, the engine's one sentence. */
import { afterAll, describe, expect, it } from 'vitest';
import { fallbackSummary } from '../../src/http/engine/index.ts';
import { runAgentd, writeAgentFile, type AgentdProcess } from '../support/agentd-process.ts';
import { until } from '../support/wait.ts';

const agent = { llm: { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' } };

describe('start-up logs', () => {
  const running: AgentdProcess[] = [];
  afterAll(async () => {
    for (const p of running) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  });

  it('are readable lines with --log-format pretty, and JSON lines by default off a terminal', async () => {
    const file = await writeAgentFile(agent);
    const pretty = runAgentd(['--agent', file, '--web-port', '0', '--log-format', 'pretty'], { AGENTD_ENGINE: 'auto' });
    const json = runAgentd(['--agent', file, '--web-port', '0'], { AGENTD_ENGINE: 'auto' });
    running.push(pretty, json);
    await until(
      () => pretty.out().includes('agent ready') && json.out().includes('agent ready'),
      () => `both ready:\n${pretty.out()}\n${json.out()}`,
      { timeout: 60_000 },
    );
    const lines = pretty.out().trimEnd().split('\n');
    expect(lines.some((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening on http:\/\/127\.0\.0\.1:\d+/.test(l))).toBe(
      true,
    );
    expect(pretty.out()).not.toContain('{"level"');
    const records = json
      .out()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; engine?: string });
    expect(records.map((r) => r.msg)).toContain('agent ready');
    // When the native engine cannot load, one short sentence says why (and nothing at info says more).
    const fallback = records.filter((r) => r.msg.endsWith(': using the node engine'));
    expect(fallback.length).toBeLessThanOrEqual(1);
    for (const r of fallback) expect(JSON.stringify(r).length).toBeLessThan(200);
  }, 120_000);

  it('name the real reason the native engine did not load', () => {
    const glibc = {
      reason:
        'This version of uWS.js (v20.57.0) supports only Node.js versions 20, 22, 24 and 25 on (glibc) Linux, macOS and Windows',
      detail:
        "Error: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by /x/uws_linux_x64_115.node)",
    };
    expect(fallbackSummary(glibc, '2.36')).toBe(
      'uWebSockets.js needs glibc 2.38, this host has 2.36: using the node engine',
    );
    expect(fallbackSummary({ reason: "Cannot find module 'uWebSockets.js'" })).toBe(
      'uWebSockets.js is not installed: using the node engine',
    );
  });
});
