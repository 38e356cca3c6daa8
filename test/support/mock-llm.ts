/** @dwmkerr/mock-llm, a third-party stand-in for a server that answers chat completions by rules (JMESPath matches). */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from '@dwmkerr/mock-llm/dist/server.js';

/** A rule: a request whose body matches `match` gets `response`. */
export interface MockLlmRule {
  path: string;
  method: string;
  match: string;
  response: { status: number; content: string };
}

/** A whole (unstreamed) chat completion whose assistant message is `message`. */
export const mockCompletion = (message: Record<string, unknown>, finish: string): string =>
  JSON.stringify({
    id: 'chatcmpl-mock',
    object: 'chat.completion',
    model: 'gpt-4',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  });

/**
 * Answers a tool call to `tool` with `args` when the last message is the user's, and `answer` (a
 * mock-llm template) when it is the tool's result: the non-streaming tool turn.
 */
export function toolTurnRules(tool: string, args: string, answer: string): MockLlmRule[] {
  const call = { id: 'call_1', type: 'function', function: { name: tool, arguments: args } };
  const rule = (last: string, content: string): MockLlmRule => ({
    path: '/v1/chat/completions',
    method: 'POST',
    match: `body.messages[-1].role == '${last}'`,
    response: { status: 200, content },
  });
  return [
    rule('user', mockCompletion({ content: null, tool_calls: [call] }, 'tool_calls')),
    rule('tool', mockCompletion({ content: answer }, 'stop')),
  ];
}

/** Starts mock-llm on a free loopback port; `url` ends in /v1. */
export async function startMockLlm(rules: MockLlmRule[]): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(
    { rules, streaming: { chunkSize: 50, chunkIntervalMs: 0 } },
    '127.0.0.1',
    0,
  ).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
