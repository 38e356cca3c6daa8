/**
 * The agent file's rules for the model's memory tools (issue 62): with memory on no tool server may take the memory
 * tools' server id (`memory`, by which the tool policy names them), and each memory tool needs a name of its own.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';

const llm = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' };
const stdio = { type: 'stdio', command: 'node' };

describe('memory tools in the agent file', () => {
  it('refuses a tool server named "client" (the server id of the tools a client runs)', () => {
    expect(() => parseConfig({ llm, mcpServers: { client: stdio } })).toThrow(/no tool server may be named "client"/);
  });

  it('refuses a tool server named "memory" while memory is on, and takes it while memory is off', () => {
    expect(() => parseConfig({ llm, memory: {}, mcpServers: { memory: stdio } })).toThrow(
      /no tool server may be named "memory"/,
    );
    expect(() => parseConfig({ llm, memory: {}, a2aAgents: { memory: { url: 'https://agent.example/' } } })).toThrow(
      /no tool server may be named "memory"/,
    );
    expect(parseConfig({ llm, mcpServers: { memory: stdio } }).mcpServers).toHaveProperty('memory');
  });

  it('refuses two memory tools of one name; a tool turned off takes none', () => {
    expect(() => parseConfig({ llm, memory: { tools: { save: 'remember', search: 'remember' } } })).toThrow(
      /each memory tool needs a name of its own/,
    );
    const config = parseConfig({ llm, memory: { tools: { save: 'remember', forget: false, profile: false } } });
    expect(config.memory?.tools).toEqual({ save: 'remember', search: 'memory_search', forget: false, profile: false });
  });
});
