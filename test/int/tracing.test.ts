/** OpenTelemetry spans of a tool turn, caught by an in-memory exporter: invoke_agent ⊃ chat, execute_tool, chat. */
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracingWanted } from '../../src/tracing/index.ts';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api } from '../support/messaging.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { fixture } from './mcp-helpers.ts';

describe('OpenTelemetry traces', () => {
  const exporter = new InMemorySpanExporter();
  let sim: Simulator;
  let svc: RunningApp;
  beforeAll(async () => {
    sim = await startSimulator();
    svc = await startApp(
      { name: 'traced', mcpServers: { echo: fixture('echo-server') } },
      { modelUrl: sim.url, deps: { spanExporter: exporter } },
    );
  });
  afterAll(async () => {
    await svc.stop();
    await sim.close();
  });

  it('records a tool turn in the GenAI conventions, without content', async () => {
    const secretWords = 'the-prompt-text-must-not-be-on-a-span';
    const reply = await api(svc.url, 'POST', '/api/message-sync', {
      message: `[[tool:echo {"message":"${secretWords}"}]] ${secretWords}`,
      sessionId: 'traced-session',
    });
    expect(reply.status).toBe(200);
    const spans = exporter.getFinishedSpans();
    const byName = (prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
    const [turn] = byName('invoke_agent');
    expect(turn?.name).toBe('invoke_agent traced');
    expect(turn?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'traced',
      'gen_ai.conversation.id': 'traced-session',
      'gen_ai.request.model': 'sim-model',
    });
    const chats = byName('chat');
    expect(chats).toHaveLength(2);
    expect(chats[0]?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai-compatible',
      'gen_ai.request.model': 'sim-model',
    });
    expect(chats[1]?.attributes['gen_ai.usage.input_tokens']).toEqual(expect.any(Number));
    const [tool] = byName('execute_tool');
    expect(tool?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'agentd.mcp.server': 'echo',
    });
    const turnId = turn?.spanContext().spanId;
    for (const child of [...chats, tool]) expect(child?.parentSpanContext?.spanId).toBe(turnId);
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes]))).not.toContain(secretWords);
  });

  it("puts a priced step's cost on its chat span (the proposed gen_ai.usage.cost.* attributes)", async () => {
    exporter.reset();
    const reply = await api(svc.url, 'POST', '/api/message-sync', { message: 'costly [[cost:0.0031]]' });
    expect(reply.status).toBe(200);
    const [chat] = exporter.getFinishedSpans().filter((s) => s.name.startsWith('chat'));
    expect(chat?.attributes).toMatchObject({
      'gen_ai.usage.cost.amount': 0.0031,
      'gen_ai.usage.cost.currency': 'USD',
      'gen_ai.usage.cost.source': 'provider',
    });
  });

  it('is off by default: only the OTEL_* variables or server.tracing turn it on', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(
      false,
    );
  });
});
