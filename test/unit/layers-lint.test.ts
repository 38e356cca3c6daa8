/**
 * `npm run lint` enforces the house rules on imports (tools/eslint/layers.js with the layer table
 * of tools/eslint/layers-config.js): these fixtures are linted with the real rule and table.
 */
import { ESLint } from 'eslint';
import { join } from 'node:path';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../../tools/eslint/layers-config.js';
import agentd, { findCycle } from '../../tools/eslint/layers.js';

const root = join(import.meta.dirname, '..', '..');

async function lint(filePath: string, code: string, layers: object = LAYERS): Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { agentd },
        rules: { 'agentd/layers': ['error', { root, ...layers }] },
      },
    ],
  });
  const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
  return (result?.messages ?? []).map((m) => m.message);
}

describe('import layers (npm run lint)', () => {
  it('refuses an import that runs up the layers, type imports included', async () => {
    expect(await lint('src/store/fixture.ts', "import type { AgentFrame } from '../agent/index.ts';")).toEqual([
      expect.stringMatching(/^store may not import agent/),
    ]);
    expect(await lint('machines/fixture.ts', "export { createAgentService } from '../src/agent/index.ts';")).toEqual([
      expect.stringMatching(/^machines may not import agent/),
    ]);
  });

  it('allows imports down the layers and within a component', async () => {
    expect(await lint('src/agent/fixture.ts', "import { toFrame } from './frames.ts';\nimport type { EventStore } from '../store/index.ts';")).toEqual([]);
  });

  it('keeps uWebSockets.js and ws (the engines), openai and the MCP transports to their components', async () => {
    expect(await lint('src/agent/fixture.ts', "import OpenAI from 'openai';")).toEqual([expect.stringMatching(/^agent may not import openai; only llm may/)]);
    expect(await lint('src/llm/fixture.ts', "import OpenAI from 'openai';")).toEqual([]);
    expect(await lint('src/agent/fixture.ts', "import { App } from 'uWebSockets.js';")).toEqual([expect.stringMatching(/only httpEngine may/)]);
    expect(await lint('src/http/fixture.ts', "const uws = await import('uWebSockets.js');")).toEqual([expect.stringMatching(/^http may not import uWebSockets\.js; only httpEngine may/)]);
    expect(await lint('src/http/fixture.ts', "import { WebSocketServer } from 'ws';")).toEqual([expect.stringMatching(/^http may not import ws; only httpEngine may/)]);
    expect(await lint('src/http/engine/fixture.ts', "import { App } from 'uWebSockets.js';\nimport { WebSocketServer } from 'ws';")).toEqual([]);
    expect(await lint('src/http/engine/fixture.ts', "import type { Route } from '../route.ts';")).toEqual([expect.stringMatching(/^httpEngine may not import http/)]);
    expect(await lint('src/http/fixture.ts', "const m = await import('@modelcontextprotocol/sdk/client/index.js');")).toEqual([expect.stringMatching(/only tools may/)]);
  });

  it('refuses a layer table whose components import each other in a cycle', async () => {
    const cyclic = { components: { a: { path: 'src/a', uses: ['b'] }, b: { path: 'src/b', uses: ['c'] }, c: { path: 'src/c', uses: ['a'] } } };
    expect(findCycle(cyclic.components)).toEqual(['a', 'b', 'c', 'a']);
    await expect(lint('src/a/fixture.ts', "import '../b/x.ts';", cyclic)).rejects.toThrow(/cycle: a → b → c → a/);
    expect(findCycle(LAYERS.components)).toBeUndefined();
  });
});
