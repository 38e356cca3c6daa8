/**
 * The agent file's rules for the model's memory tools (issue 62): their server id, `agentd:memory` (by which the tool
 * policy names them), is no tool server's name, so a server named `memory` sits beside them (issue 69); each memory
 * tool needs a name of its own.
 */
import { describe, expect, it } from 'vitest';
import { MEMORY_SERVER_ID, parseConfig } from '../../src/config/index.ts';

const llm = { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', model: 'm' };
const stdio = { type: 'stdio', command: 'node' };

describe('memory tools in the agent file', () => {
  it('refuses a tool server named "client" (the server id of the tools a client runs)', () => {
    expect(() => parseConfig({ llm, mcpServers: { client: stdio } })).toThrow(/no tool server may be named "client"/);
  });

  it('takes a tool server named "memory" with memory on; the memory tools\' id `agentd:memory` no server can take', () => {
    const config = parseConfig({ llm, memory: {}, mcpServers: { memory: stdio } });
    expect(config.mcpServers).toHaveProperty('memory');
    expect(
      parseConfig({ llm, memory: {}, a2aAgents: { memory: { url: 'https://agent.example/' } } }).a2aAgents,
    ).toHaveProperty('memory');
    expect(() => parseConfig({ llm, mcpServers: { [MEMORY_SERVER_ID]: stdio } })).toThrow(
      /mcpServers.agentd:memory: Invalid key/,
    );
    expect(MEMORY_SERVER_ID).toBe('agentd:memory');
  });

  it('names the memory tools in toolPolicy as `agentd:memory`; a rule for `memory` with no such server is refused', () => {
    const rules = [{ server: 'agentd:memory', tool: 'memory_forget', action: 'ask' }];
    expect(parseConfig({ llm, memory: {}, toolPolicy: { rules } }).toolPolicy.rules).toEqual(rules);
    const old = { rules: [{ server: 'memory', tool: 'memory_forget', action: 'ask' }] };
    expect(() => parseConfig({ llm, memory: {}, toolPolicy: old })).toThrow(
      /no tool server has that name: the built-in memory tools' server is "agentd:memory"/,
    );
    // A rule for a server named memory, which there is, or with memory off: the rule is that server's.
    expect(
      parseConfig({ llm, memory: {}, mcpServers: { memory: stdio }, toolPolicy: old }).toolPolicy.rules,
    ).toHaveLength(1);
    expect(parseConfig({ llm, toolPolicy: old }).toolPolicy.rules).toHaveLength(1);
  });

  it('refuses two memory tools of one name; a tool turned off takes none', () => {
    expect(() => parseConfig({ llm, memory: { tools: { save: 'remember', search: 'remember' } } })).toThrow(
      /each memory tool needs a name of its own/,
    );
    const config = parseConfig({ llm, memory: { tools: { save: 'remember', forget: false, profile: false } } });
    expect(config.memory?.tools).toEqual({ save: 'remember', search: 'memory_search', forget: false, profile: false });
  });
});
