/**
 * The default storage folder of an agent file that names none: the file's own in the per-user data folder
 * (`$XDG_DATA_HOME/agentd/<name>-<hash>/sessions`), whatever folder agentd is started in — a desktop MCP client
 * starts it in `/`. Two agent files each get their own; two agentds on one file meet at the storage lock.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { agentDataName } from '../../src/config/storage-dir.ts';
import { LOCK_FILE } from '../../src/store/dir-lock.ts';
import { listeningPort, runAgentd, type AgentdProcess } from '../support/agentd-process.ts';
import { AGENTD_BIN } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';

/** An agent file with no storage key, as `<folder>/agent.yml` in a fresh folder. */
async function agentFile(modelUrl: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-default-storage-'));
  const file = join(dir, 'agent.yml');
  await writeFile(file, `llm: { provider: openai-compatible, baseURL: "${modelUrl}", model: sim-model }\n`);
  return file;
}

/** A working folder where `./data/sessions` cannot be made (`data` is a file), whoever runs the test, root included. */
async function unwritableCwd(): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'agentd-blocked-cwd-'));
  await writeFile(join(cwd, 'data'), 'not a folder');
  return cwd;
}

const sessionsOf = (dataHome: string, file: string) => join(dataHome, 'agentd', agentDataName(file), 'sessions');

describe('the default storage folder', () => {
  let sim: Simulator;
  const started: AgentdProcess[] = [];
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, record: false });
  });
  afterAll(async () => {
    for (const p of started) p.child.kill('SIGTERM');
    await Promise.all(started.map((p) => p.exited));
    await sim.close();
  });

  it('serves MCP on stdio started in / (or an unwritable folder) as a desktop client does, keeping its sessions in the per-user data folder', async () => {
    const dataHome = await mkdtemp(join(tmpdir(), 'agentd-xdg-'));
    const file = await agentFile(sim.url);
    // Run as root, `/` is writable: a regression would write /data/sessions there, so root gets a folder it cannot use.
    const cwd = process.getuid?.() === 0 ? await unwritableCwd() : '/';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [AGENTD_BIN, '--mcp-transport', 'stdio', '--agent', file, '--log-level', 'info'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testRunEnv(), XDG_DATA_HOME: dataHome },
      cwd,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    try {
      await client.connect(transport).catch((err: unknown) => {
        throw new Error(`stdio agentd failed: ${String(err)}\n${stderr}`);
      });
      const result = await client.callTool({
        name: 'chat_with_agent',
        arguments: { message: 'remember me', sessionId: 'desk' },
      });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      const dir = sessionsOf(dataHome, file);
      const files = await readdir(dir);
      expect(files).toContain(LOCK_FILE);
      expect(
        files.filter((f) => !f.startsWith('.')),
        'the session desk',
      ).toEqual([expect.stringMatching(/^desk/)]);
      expect(stderr).toContain(`sessions are kept in ${dir}`); // said at start, on stderr (stdout is the protocol's)
    } finally {
      await client.close();
    }
  });

  it('two agent files served at once from an unwritable working folder each get their own; one file twice meets the lock', async () => {
    const dataHome = await mkdtemp(join(tmpdir(), 'agentd-xdg-'));
    const env = { XDG_DATA_HOME: dataHome };
    const cwd = await unwritableCwd();
    const [a, b] = [await agentFile(sim.url), await agentFile(sim.url)];
    const start = (file: string) => {
      const p = runAgentd(['--agent', file, '--web-port', '0', '--log-level', 'info'], env, { cwd });
      started.push(p);
      return p;
    };
    const [first, other] = [start(a), start(b)];
    for (const [p, file] of [
      [first, a],
      [other, b],
    ] as const) {
      const port = await listeningPort(p);
      expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
      expect(existsSync(join(sessionsOf(dataHome, file), LOCK_FILE))).toBe(true);
      expect(p.out()).toContain(`sessions are kept in ${sessionsOf(dataHome, file)}`);
    }
    expect(sessionsOf(dataHome, a)).not.toBe(sessionsOf(dataHome, b));
    // The same file again: refused, naming the agentd that holds the folder.
    const second = start(a);
    expect(await second.exited).toBe(1);
    expect(second.err()).toContain(`storage directory ${sessionsOf(dataHome, a)} is in use by another agentd`);
    expect(second.err()).toContain(`process ${first.child.pid} `);
  });

  it('keeps a working folder’s non-empty ./data/sessions (the former default), with a warning', async () => {
    const dataHome = await mkdtemp(join(tmpdir(), 'agentd-xdg-'));
    const cwd = await mkdtemp(join(tmpdir(), 'agentd-legacy-cwd-'));
    const legacy = join(cwd, 'data', 'sessions');
    await mkdir(legacy, { recursive: true });
    await writeFile(join(legacy, 'kept.jsonl'), '');
    const file = await agentFile(sim.url);
    const p = runAgentd(['--agent', file, '--web-port', '0'], { XDG_DATA_HOME: dataHome }, { cwd });
    started.push(p);
    await listeningPort(p);
    expect(existsSync(join(legacy, LOCK_FILE))).toBe(true);
    expect(existsSync(sessionsOf(dataHome, file))).toBe(false);
    const warning = p
      .out()
      .split('\n')
      .find((line) => line.includes('sessions are kept in'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({ level: 40, storageDir: legacy, from: 'legacy' });
  });
});
