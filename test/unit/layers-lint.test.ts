/**
 * `npm run lint` enforces the house rules on imports (tools/eslint/layers.js with the layer table
 * of tools/eslint/layers-config.js): these fixtures are linted with the real rule and table. File
 * cycles need the other files of the cycle on disk: those fixtures live in a temporary folder that
 * stands in for the repository root.
 */
import { ESLint } from 'eslint';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import tseslint from 'typescript-eslint';
import { afterAll, describe, expect, it } from 'vitest';
import { findFileCycles } from '../../tools/eslint/file-cycles.js';
import { LAYERS } from '../../tools/eslint/layers-config.js';
import agentd, { componentOf, findCycle, findFolderCycle } from '../../tools/eslint/layers.js';

const repoRoot = join(import.meta.dirname, '..', '..');

async function lintAt(
  root: string,
  filePath: string,
  code: string,
  layers: object = LAYERS,
): Promise<ESLint.LintResult['messages']> {
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
  return result?.messages ?? [];
}

async function lint(filePath: string, code: string, layers: object = LAYERS): Promise<string[]> {
  return (await lintAt(repoRoot, filePath, code, layers)).map((m) => m.message);
}

/** A stand-in repository root holding `files`; each file is linted from disk by `lintFile`. */
function fixtureRoot(files: Record<string, string>): {
  lintFile: (path: string, code?: string) => Promise<ESLint.LintResult['messages']>;
} {
  const root = mkdtempSync(join(tmpdir(), 'agentd-layers-'));
  roots.push(root);
  for (const [path, code] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), code);
  }
  return { lintFile: (path, code) => lintAt(root, path, code ?? files[path] ?? '') };
}
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Every .ts file under src/ and machines/ of the repository, absolute. */
function sourceFiles(): string[] {
  return ['src', 'machines'].flatMap((dir) =>
    readdirSync(join(repoRoot, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(repoRoot, dir, f)),
  );
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
    expect(
      await lint(
        'src/agent/fixture.ts',
        "import { toFrame } from './frames.ts';\nimport type { EventStore } from '../store/index.ts';",
      ),
    ).toEqual([]);
  });

  it('keeps uWebSockets.js and ws (the engines), openai and the MCP transports to their components', async () => {
    expect(await lint('src/agent/fixture.ts', "import OpenAI from 'openai';")).toEqual([
      expect.stringMatching(/^agent may not import openai; only llm may/),
    ]);
    expect(await lint('src/llm/fixture.ts', "import OpenAI from 'openai';")).toEqual([]);
    expect(await lint('src/agent/fixture.ts', "import { App } from 'uWebSockets.js';")).toEqual([
      expect.stringMatching(/only httpEngine may/),
    ]);
    expect(await lint('src/http/fixture.ts', "const uws = await import('uWebSockets.js');")).toEqual([
      expect.stringMatching(/^http may not import uWebSockets\.js; only httpEngine may/),
    ]);
    expect(await lint('src/http/fixture.ts', "import { WebSocketServer } from 'ws';")).toEqual([
      expect.stringMatching(/^http may not import ws; only httpEngine may/),
    ]);
    expect(
      await lint(
        'src/http/engine/fixture.ts',
        "import { App } from 'uWebSockets.js';\nimport { WebSocketServer } from 'ws';",
      ),
    ).toEqual([]);
    expect(await lint('src/http/engine/fixture.ts', "import type { Route } from '../route.ts';")).toEqual([
      expect.stringMatching(/^httpEngine may not import http/),
    ]);
    expect(await lint('src/http/fixture.ts', "const m = await import('@modelcontextprotocol/client');")).toEqual([
      expect.stringMatching(/only tools, toolsOauth, toolsMcp, toolsA2a may/),
    ]);
  });

  it('mounts the faces from above: a face imports the endpoint kit of http, http imports no face', async () => {
    const kit = "import { faceEndpoint } from '../http/face-endpoint.ts';";
    for (const face of ['mcp-face', 'a2a-face', 'ag-ui-face'])
      expect(await lint(`src/${face}/fixture.ts`, kit)).toEqual([]);
    expect(await lint('src/http/fixture.ts', "import type { FaceMount } from '../a2a-face/index.ts';")).toEqual([
      expect.stringMatching(/^http may not import a2aFace/),
    ]);
    expect(await lint('src/http/routes/fixture.ts', "import { agUiMount } from '../../ag-ui-face/index.ts';")).toEqual([
      expect.stringMatching(/^http may not import agUiFace/),
    ]);
    expect(await lint('src/a2a-face/fixture.ts', "import { hopsOf } from '../tools/index.ts';")).toEqual([
      expect.stringMatching(/^a2aFace may not import tools/),
    ]);
  });

  it('layers the tools: OAuth below the MCP client, A2A agents above it, the service on top, the contract below all', async () => {
    expect(
      await lint('src/tools/oauth/fixture.ts', "import type { McpConnection } from '../mcp/connection.ts';"),
    ).toEqual([expect.stringMatching(/^toolsOauth may not import toolsMcp/)]);
    expect(await lint('src/tools/mcp/fixture.ts', "import type { CatalogueItem } from '../catalogue.ts';")).toEqual([
      expect.stringMatching(/^toolsMcp may not import tools /),
    ]);
    expect(await lint('src/tools/mcp/fixture.ts', "import type { AgentConfig } from '../a2a/agent.ts';")).toEqual([
      expect.stringMatching(/^toolsMcp may not import toolsA2a/),
    ]);
    expect(await lint('src/tools/fixture.ts', "import type { McpConnection } from './mcp/connection.ts';")).toEqual([]);
    expect(
      await lint('src/tools/a2a/fixture.ts', "import type { McpConnection } from '../mcp/connection.ts';"),
    ).toEqual([]);
    expect(
      await lint(
        'src/tools/mcp/fixture.ts',
        "import type { ServerOAuth } from '../oauth/client.ts';\nimport type { Sampler } from '../server-asks.ts';",
      ),
    ).toEqual([]);
    expect(
      await lint('src/agent/questions/fixture.ts', "import type { Elicitor } from '../../tools/mcp/elicitation.ts';"),
    ).toEqual([expect.stringMatching(/^agentQuestions may not import toolsMcp/)]);
  });

  it('refuses a layer table whose components import each other in a cycle', async () => {
    const cyclic = {
      components: {
        a: { path: 'src/a', uses: ['b'] },
        b: { path: 'src/b', uses: ['c'] },
        c: { path: 'src/c', uses: ['a'] },
      },
    };
    expect(findCycle(cyclic.components)).toEqual(['a', 'b', 'c', 'a']);
    await expect(lint('src/a/fixture.ts', "import '../b/x.ts';", cyclic)).rejects.toThrow(/cycle: a → b → c → a/);
    expect(findCycle(LAYERS.components)).toBeUndefined();
  });

  it("refuses a table whose folders import each other through a sub-folder's row (agent → memory → memory/feature → http → agent)", async () => {
    const looped = {
      components: {
        http: { path: 'src/http', uses: ['agent'] },
        agent: { path: 'src/agent', uses: ['memory'] },
        memory: { path: 'src/memory' },
        memoryFeature: { path: 'src/memory/feature', uses: ['http', 'memory'] },
      },
    };
    expect(findCycle(looped.components)).toBeUndefined(); // row by row it is acyclic
    expect(findFolderCycle(looped.components)).toEqual(['src/http', 'src/agent', 'src/memory', 'src/http']);
    await expect(lint('src/agent/fixture.ts', "import '../memory/x.ts';", looped)).rejects.toThrow(
      /folders import each other in a cycle .*: src\/http → src\/agent → src\/memory → src\/http/,
    );
    // The table as it was, the agent using memory: refused (memory's feature builds the agent's MemoryPort).
    const agent = LAYERS.components['agent']!;
    const before = { ...LAYERS.components, agent: { path: agent.path, uses: [...(agent.uses ?? []), 'memory'] } };
    expect(findFolderCycle(before)).toEqual(expect.arrayContaining(['src/agent', 'src/memory']));
    expect(findFolderCycle(LAYERS.components)).toBeUndefined();
  });

  it('refuses a relative import of anything outside the components: tools/, test/, bench/, package.json, an unlisted folder', async () => {
    const code =
      "import agentd from '../../tools/eslint/layers.js';\nimport { fake } from '../../test/helpers/fake.ts';\nimport type { Run } from '../../bench/run.ts';";
    expect(await lint('src/store/fixture.ts', code)).toEqual([
      expect.stringMatching(
        /^store may never import tools\/eslint\/layers\.js \(\.\.\/\.\.\/tools\/eslint\/layers\.js\): not a component\. src\/ and machines\/ import only their components/,
      ),
      expect.stringMatching(/^store may never import test\/helpers\/fake\.ts .*: not a component/),
      expect.stringMatching(/^store may never import bench\/run\.ts .*: not a component/),
    ]);
    expect(
      await lint('machines/fixture.ts', "const pkg = await import('../package.json', { with: { type: 'json' } });"),
    ).toEqual([expect.stringMatching(/^machines may never import package\.json/)]);
    expect(await lint('src/agent/fixture.ts', "import { serve } from '../grpc-face/serve.ts';")).toEqual([
      expect.stringMatching(
        /^agent may never import src\/grpc-face\/serve\.ts .*Add its folder to tools\/eslint\/layers-config\.js as a component and to the uses of agent/,
      ),
    ]);
    expect(await lint('src/agent/fixture.ts', "type Face = import('../../tools/x.ts').Face;")).toEqual([
      expect.stringMatching(/^agent may never import tools\/x\.ts/),
    ]);
  });

  it('allows JSON and other assets inside a component, and ignores specifiers in comments and strings', async () => {
    expect(
      await lint(
        'machines/fixture.ts',
        "import layouts from './layouts.json' with { type: 'json' };\n// import '../tools/x.ts'\nconst s = \"import('../test/x.ts')\";",
      ),
    ).toEqual([]);
  });

  it('refuses a file of no component and says where to list it', async () => {
    expect(await lint('src/grpc-face/fixture.ts', 'export const x = 1;')).toEqual([
      'src/grpc-face/fixture.ts belongs to no component of the layer table: add its folder to tools/eslint/layers-config.js as a component with the components it uses (or move the file into an existing component)',
    ]);
  });

  it('refuses a two-file cycle on the import that closes it, naming the cycle', async () => {
    const { lintFile } = fixtureRoot({
      'src/conversation/a.ts': "import { b } from './b.ts';\nexport const a = 1;",
      'src/conversation/b.ts': "export { a } from './a.ts';\nexport const b = 2;",
    });
    const messages = await lintFile('src/conversation/a.ts');
    expect(messages.map((m) => m.message)).toEqual([
      expect.stringMatching(
        /^import cycle: src\/conversation\/a\.ts → src\/conversation\/b\.ts → src\/conversation\/a\.ts\. Files never import each other/,
      ),
    ]);
    expect(messages[0]).toMatchObject({ line: 1, column: 20 });
    expect((await lintFile('src/conversation/b.ts')).map((m) => m.message)).toEqual([
      expect.stringMatching(
        /^import cycle: src\/conversation\/b\.ts → src\/conversation\/a\.ts → src\/conversation\/b\.ts\./,
      ),
    ]);
    // The text being linted (an editor's unsaved buffer) counts for its own file, not the file on disk.
    expect(await lintFile('src/conversation/a.ts', 'export const a = 1;')).toEqual([]);
  });

  it('refuses a three-file cycle of type imports and dynamic import() across components', async () => {
    const { lintFile } = fixtureRoot({
      'src/conversation/a.ts': "import type { B } from './b.ts';\nexport type A = B;",
      'src/conversation/b.ts': "import type { C } from './c.ts';\nexport type B = C;",
      'src/conversation/c.ts': "export type C = import('./a.ts').A;",
      'machines/m.machine.ts':
        "import type { A } from '../src/conversation/a.ts';\nexport const load = () => import('./n.machine.ts');",
      'machines/n.machine.ts':
        "import type { A } from '../src/conversation/a.ts';\nexport { load } from './m.machine.ts';",
    });
    expect((await lintFile('src/conversation/a.ts')).map((m) => m.message)).toEqual([
      expect.stringMatching(
        /^import cycle: src\/conversation\/a\.ts → src\/conversation\/b\.ts → src\/conversation\/c\.ts → src\/conversation\/a\.ts\./,
      ),
    ]);
    expect((await lintFile('src/conversation/c.ts')).map((m) => m.message)).toEqual([
      expect.stringMatching(
        /^import cycle: src\/conversation\/c\.ts → src\/conversation\/a\.ts → src\/conversation\/b\.ts → src\/conversation\/c\.ts\./,
      ),
    ]);
    expect((await lintFile('machines/m.machine.ts')).map((m) => m.message)).toEqual([
      expect.stringMatching(
        /^import cycle: machines\/m\.machine\.ts → machines\/n\.machine\.ts → machines\/m\.machine\.ts\./,
      ),
    ]);
  });

  it('refuses a cycle of type imports closed by a namespace re-export (export * as)', async () => {
    const { lintFile } = fixtureRoot({
      'src/store/index.ts':
        "export * as records from './records/index.ts';\nexport type StorageConfig = { dir: string };",
      'src/store/records/index.ts': "export type * from './types.ts';",
      'src/store/records/types.ts': "import type { Lease } from '../secret-store.ts';\nexport type Held = Lease;",
      'src/store/secret-store.ts':
        "import type { StorageConfig } from './index.ts';\nexport interface Lease { at: StorageConfig }",
    });
    const messages = await lintFile('src/store/index.ts');
    expect(messages.map((m) => m.message)).toEqual([
      expect.stringMatching(
        /^import cycle: src\/store\/index\.ts → src\/store\/records\/index\.ts → src\/store\/records\/types\.ts → src\/store\/secret-store\.ts → src\/store\/index\.ts\./,
      ),
    ]);
    expect(messages[0]).toMatchObject({ line: 1, column: 27 }); // the specifier, as for any import
    expect(await lintFile('src/store/index.ts', "export type * as records from './records/index.ts';")).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^import cycle: src\/store\/index\.ts → /) }),
    ]);
  });

  it('passes an acyclic chain, a diamond and a file that imports the same file twice', async () => {
    const { lintFile } = fixtureRoot({
      'src/conversation/a.ts':
        "import type { B } from './b.ts';\nimport { c } from './c.ts';\nexport type { C } from './c.ts';\nexport const a = (b: B) => b + c;",
      'src/conversation/b.ts': "import { c } from './c.ts';\nexport type B = typeof c;",
      'src/conversation/c.ts': "import { MAX_JSON_DEPTH } from '../json-depth.ts';\nexport const c = MAX_JSON_DEPTH;",
      'src/json-depth.ts': 'export const MAX_JSON_DEPTH = 64;',
      'machines/m.machine.ts': "import { a } from '../src/conversation/a.ts';\nexport const m = a;",
    });
    for (const file of [
      'src/conversation/a.ts',
      'src/conversation/b.ts',
      'src/conversation/c.ts',
      'machines/m.machine.ts',
    ]) {
      expect(await lintFile(file)).toEqual([]);
    }
  });

  it('finds no file cycle in the repository, and every file under src/ and machines/ belongs to a component', () => {
    const files = sourceFiles();
    expect(files.length).toBeGreaterThan(50);
    expect(findFileCycles(files).map((cycle) => cycle.map((f) => relative(repoRoot, f)).join(' → '))).toEqual([]);
    const unlisted = files
      .map((f) => relative(repoRoot, f).split('\\').join('/'))
      .filter((f) => componentOf(f, LAYERS.components) === undefined);
    expect(unlisted).toEqual([]);
  });

  it('finds a cycle the way the repository test would', () => {
    const root = mkdtempSync(join(tmpdir(), 'agentd-layers-'));
    roots.push(root);
    const write = (path: string, code: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), code);
      return join(root, path);
    };
    const a = write('src/a.ts', "import './b.ts';");
    const b = write('src/b.ts', "import type { X } from './a.ts';");
    const c = write('src/c.ts', "import './a.ts';");
    expect(findFileCycles([a, b, c])).toEqual([
      [a, b, a],
      [b, a, b],
    ]);
  });
});
