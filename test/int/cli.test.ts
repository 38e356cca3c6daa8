import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FROM_SOURCES, listeningPort, runAgentd, writeAgentFile } from '../support/agentd-process.ts';
import { until } from '../support/wait.ts';
import { connectWs } from '../support/ws-client.ts';
import { fixturePath } from './mcp-helpers.ts';

/** Pids of processes whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Pids of the children of `parent` whose command line contains `marker`. */
function childrenWith(parent: number, marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-P', String(parent), '-f', marker], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** Whether agentd runs a group reaper (Linux with /bin/sh: it then ends a killed agentd's tool-server groups). */
const reaped = process.platform === 'linux' && existsSync('/bin/sh');
const NO_REAPER = 'no group reaper here: not checking that a killed agentd takes its tool servers with it';

/** agentd's health, as `/api/health` reports it. */
const healthOf = async (port: number): Promise<any> => (await fetch(`http://127.0.0.1:${port}/api/health`)).json();

describe('agentd command line', () => {
  it('prints usage and exits 2 on an unknown flag or a bad value', async () => {
    for (const args of [['--frobnicate'], ['--web-port', 'eighty']]) {
      const p = runAgentd(args);
      expect(await p.exited).toBe(2);
      expect(p.err()).toContain('Usage: agentd');
    }
  });

  it('prints help and version (the compiled command and `npm run dev` from the sources alike)', async () => {
    const dev = runAgentd(['--help'], {}, { command: FROM_SOURCES });
    expect(await dev.exited).toBe(0);
    expect(dev.out()).toContain('--web-port <port>');
    const help = runAgentd(['--help']);
    expect(await help.exited).toBe(0);
    expect(help.out()).toContain('--web-port <port>');
    const version = runAgentd(['--version']);
    expect(await version.exited).toBe(0);
    expect(version.out().trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('exits 1 naming the file and the problem when the config is bad, before listening', async () => {
    const file = await writeAgentFile('llm:\n  model: m\n  apiKey: $AGENTD_TEST_UNSET_KEY\n');
    const p = runAgentd(['--agent', file, '--web-port', '0']);
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain(file);
    expect(p.err()).toContain('AGENTD_TEST_UNSET_KEY');
    expect(p.out()).not.toContain('listening');
  });

  it.each([
    ['openai-compatible without baseURL', 'llm:\n  provider: openai-compatible\n  model: m\n', /needs llm\.baseURL/],
    [
      'a provider without its key',
      'llm:\n  provider: openai\n  model: m\n',
      /needs an API key: set OPENAI_API_KEY or llm\.apiKey/,
    ],
  ])('exits 1 naming the file for %s, with no stack trace', async (_name, yaml, problem) => {
    const file = await writeAgentFile(yaml);
    const p = runAgentd(['--agent', file, '--web-port', '0']);
    expect(await p.exited).toBe(1);
    expect(p.err()).toMatch(problem);
    expect(p.err()).toContain(file);
    expect(p.err()).not.toMatch(/\n\s+at /);
  });

  it("without the model's key names, from a checkout, its demo script and npx agentd (the installed command's words: package.test.ts)", async () => {
    const p = runAgentd(['--agent', await writeAgentFile('llm:\n  provider: openai\n  model: m\n'), '--web-port', '0']);
    expect(await p.exited).toBe(1);
    expect(p.err()).toMatch(/^ {2}npm run demo$/m);
    expect(p.err()).toContain('npx agentd init local.yml --provider ollama && npx agentd --agent local.yml');
  });

  it('exits 1 naming the storage directory when it cannot be created, before listening', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-cli-'));
    const blocker = join(dir, 'a-file');
    await writeFile(blocker, '');
    const file = await writeAgentFile(
      `llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: jsonl\n  dir: ${blocker}/sessions\n`,
    );
    const p = runAgentd(['--agent', file, '--web-port', '0']);
    expect(await p.exited).toBe(1);
    expect(p.err()).toContain(`${blocker}/sessions`);
    expect(p.err()).toContain('ENOTDIR');
    expect(p.out()).not.toContain('listening');
  });

  it('a second instance on a port in use exits 1 saying so; the first keeps serving', async () => {
    const file = await writeAgentFile(
      'llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: memory\n',
    );
    const first = runAgentd(['--agent', file, '--web-port', '0']);
    try {
      const port = await listeningPort(first);
      const second = runAgentd(['--agent', file, '--web-port', String(port)]);
      expect(await second.exited).toBe(1);
      expect(second.err()).toBe(`agentd: port ${port} is in use; pick another with --web-port\n`);
      expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  it('serves, then on SIGTERM closes WebSockets with 1001, stops its tool servers and exits 0', async () => {
    const marker = `agentd-cli-test-${process.pid}-${Date.now()}`;
    const file = await writeAgentFile(
      `llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: memory\n` +
        `mcpServers:\n  echo:\n    type: stdio\n    command: ${process.execPath}\n    args: [${fixturePath('echo-server')}, ${marker}]\n`,
    );
    const p = runAgentd(['--agent', file, '--web-port', '0', '--log-level', 'info']);
    const port = await listeningPort(p);
    const health = (await (await fetch(`http://127.0.0.1:${port}/api/health`)).json()) as Record<string, unknown>;
    expect(health.status).toBe('healthy');
    const ws = await connectWs(`ws://127.0.0.1:${port}/`);
    await until(async () => (await healthOf(port)).agent.connectedServers === 1, 'its tool server connected');
    expect(processesWith(marker)).toHaveLength(1);
    p.child.kill('SIGTERM');
    expect(await ws.closed).toBe(1001);
    expect(await p.exited).toBe(0);
    expect(processesWith(marker)).toEqual([]);
    const lines = p
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.msg === 'shutting down')).toBe(true);
  });

  it('--inspect serves the inspector (off without it), and the late-join state names the actors', async () => {
    const file = await writeAgentFile(
      `llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: memory\n`,
    );
    const p = runAgentd(['--agent', file, '--web-port', '0', '--inspect']);
    const port = await listeningPort(p);
    const viewer = await connectWs(`ws://127.0.0.1:${port}/inspect/ws`);
    viewer.send({ type: 'ignored' });
    await fetch(`http://127.0.0.1:${port}/api/reset`, { method: 'POST' }); // opens the default session
    const actor = (await viewer.next(
      (f) => (f as unknown as { name?: string }).name === 'turn:default',
    )) as unknown as { type: string };
    expect(actor.type).toBe('@xstate.actor');
    viewer.close();
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);

    const plain = runAgentd(['--agent', file, '--web-port', '0']);
    const plainPort = await listeningPort(plain);
    await expect(connectWs(`ws://127.0.0.1:${plainPort}/inspect/ws`)).rejects.toThrow(/upgrade refused: 400/);
    plain.child.kill('SIGTERM');
    expect(await plain.exited).toBe(0);
  });

  it('exits at once on a second signal during a slow shutdown, leaving no tool server behind', async () => {
    const marker = `agentd-double-signal-${process.pid}-${Date.now()}`;
    const file = await writeAgentFile(
      `llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: memory\n` +
        `mcpServers:\n  stubborn:\n    type: stdio\n    command: ${process.execPath}\n    args: [${fixturePath('hang-server')}, ${marker}]\n`,
    );
    const p = runAgentd(['--agent', file, '--web-port', '0']);
    const port = await listeningPort(p);
    await until(async () => (await healthOf(port)).agent.status === 'ready', 'agent ready');
    p.child.kill('SIGTERM');
    await until(() => p.out().includes('shutting down'), 'shutting down logged');
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(1);
    expect(p.out()).toContain('second signal: exiting now');
    await until(() => processesWith(marker).length === 0, 'the tool server gone'); // the hang server ignores stdin closing
  });

  it('a second agentd over the same storage directory exits 1 naming the one that holds it, which serves on', async () => {
    const data = await mkdtemp(join(tmpdir(), 'agentd-same-dir-'));
    const file = await writeAgentFile(
      `llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: jsonl\n  dir: ${data}\n`,
    );
    const first = runAgentd(['--agent', file, '--web-port', '0']);
    try {
      const port = await listeningPort(first);
      const second = runAgentd(['--agent', file, '--web-port', '0']);
      expect(await second.exited).toBe(1);
      expect(second.err()).toContain(
        `storage directory ${data} is in use by another agentd (process ${first.child.pid}`,
      );
      expect(second.out()).not.toContain('"port"');
      expect((await healthOf(port)).status).toBe('healthy');
    } finally {
      first.child.kill('SIGTERM');
    }
    expect(await first.exited).toBe(0);
    expect(existsSync(join(data, '.agentd-lock'))).toBe(false); // given up at the stop
  });

  it('a killed (-9) agentd takes its tool server with it (the group reaper); elsewhere the next start kills it', async () => {
    const marker = `agentd-kill9-${process.pid}-${Date.now()}`;
    const data = await mkdtemp(join(tmpdir(), 'agentd-kill9-'));
    const file = await writeAgentFile(
      `llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: jsonl\n  dir: ${data}\n` +
        `mcpServers:\n  stubborn:\n    type: stdio\n    command: ${process.execPath}\n    args: [${fixturePath('hang-server')}, ${marker}]\n`,
    );
    const first = runAgentd(['--agent', file, '--web-port', '0']);
    const port = await listeningPort(first);
    await until(async () => (await healthOf(port)).agent.connectedServers === 1, 'its tool server connected');
    first.child.kill('SIGKILL'); // node itself runs agentd: nothing of agentd runs after
    await first.exited;
    if (reaped) {
      await until(() => processesWith(marker).length === 0, 'the tool server gone by itself'); // it ignores stdin closing: the reaper killed it
      return;
    }
    console.warn(NO_REAPER);
    expect(processesWith(marker)).toHaveLength(1); // orphaned: it ignores stdin closing

    const second = runAgentd(['--agent', file, '--web-port', '0', '--log-level', 'info']);
    try {
      await listeningPort(second);
      await until(() => processesWith(marker).length <= 1, 'the orphaned tool server gone'); // the old one is gone; the new one may be up
      expect(second.out()).toContain('killed a tool server left behind by an agentd that is gone');
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
    await until(() => processesWith(marker).length === 0, 'the tool server gone');
  });

  it.runIf(reaped)(
    'kills at the next start what a launcher left behind when agentd and its reaper were both killed (-9)',
    async () => {
      const marker = `agentd-kill9-launcher-${process.pid}-${Date.now()}`;
      const data = await mkdtemp(join(tmpdir(), 'agentd-kill9-'));
      // `; :` keeps sh from exec'ing node: sh stays the group leader, node its child (a launcher's server)
      const file = await writeAgentFile(
        `llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: jsonl\n  dir: ${data}\n` +
          `mcpServers:\n  launched:\n    type: stdio\n    command: sh\n    args: ['-c', '${process.execPath} ${fixturePath('hang-server')} ${marker}; :']\n`,
      );
      const first = runAgentd(['--agent', file, '--web-port', '0']);
      let second: ReturnType<typeof runAgentd> | undefined;
      try {
        const port = await listeningPort(first);
        await until(async () => (await healthOf(port)).agent.connectedServers === 1, 'its tool server connected');
        expect(processesWith(marker)).toHaveLength(2); // sh and its node
        // The reaper killed first, then agentd at once (it starts another reaper only a second later), then the
        // launcher: what is left is a leaderless group, as a death without the reaper leaves it.
        const reaper = childrenWith(first.child.pid!, 'agentd group reaper');
        expect(reaper).toHaveLength(1);
        process.kill(Number(reaper[0]), 'SIGKILL');
        first.child.kill('SIGKILL');
        await first.exited;
        for (const pid of processesWith(`^sh -c .*${marker}`)) process.kill(Number(pid), 'SIGKILL'); // the launcher
        await until(() => processesWith(marker).length === 1, 'the launcher gone, its child left');
        const left = processesWith(marker);

        second = runAgentd(['--agent', file, '--web-port', '0', '--log-level', 'info']);
        await listeningPort(second);
        await until(() => !processesWith(marker).some((pid) => left.includes(pid)), 'the left-behind processes gone'); // the new sh and node may be up
        expect(second.out()).toContain("killed what a gone tool server's launcher left in its process group");
        second.child.kill('SIGTERM');
        await second.exited;
        await until(() => processesWith(marker).length === 0, 'the tool server gone');
      } finally {
        // Whatever failed: nothing of this test left running.
        for (const p of [first, second])
          if (p && p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        for (const pid of processesWith(marker)) process.kill(Number(pid), 'SIGKILL');
      }
    },
  );

  describe('AGENTD_ENGINE', () => {
    const memoryAgent = () =>
      writeAgentFile(
        'llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: m\nstorage:\n  type: memory\n',
      );
    const logLines = (p: ReturnType<typeof runAgentd>) =>
      p
        .out()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    // UWS_USE_FALLBACK makes a uWebSockets.js package that carries a JS emulation load it, which agentd counts as not loading.
    const noNative = { UWS_USE_FALLBACK: '1' };

    it('node: serves on node:net + ws and says so in the log and in health', async () => {
      const p = runAgentd(['--agent', await memoryAgent(), '--web-port', '0'], { AGENTD_ENGINE: 'node' });
      try {
        const port = await listeningPort(p);
        expect(logLines(p).find((l) => l.port === port)).toMatchObject({
          engine: 'node',
          msg: expect.stringMatching(/listening on .*\(node:net \+ ws\)/),
        });
        expect(p.out()).not.toContain('cannot load');
        expect(((await (await fetch(`http://127.0.0.1:${port}/api/health`)).json()) as { engine: string }).engine).toBe(
          'node',
        );
      } finally {
        p.child.kill('SIGTERM');
        await p.exited;
      }
    });

    it('auto: uWebSockets.js where its addon loads, else node with one line saying why', async () => {
      const p = runAgentd(['--agent', await memoryAgent(), '--web-port', '0'], { AGENTD_ENGINE: 'auto', ...noNative });
      try {
        const port = await listeningPort(p);
        const engine = logLines(p).find((l) => l.port === port)?.engine;
        const why = logLines(p).filter((l) => String(l.msg).startsWith('uWebSockets.js'));
        // One sentence naming the cause (e.g. the glibc it needs and the one here), nothing more at info.
        if (engine === 'node')
          expect(why).toEqual([
            expect.objectContaining({
              level: 30,
              engine: 'node',
              msg: expect.stringMatching(/: using the node engine$/),
            }),
          ]);
        else expect([engine, why]).toEqual(['uws', []]);
      } finally {
        p.child.kill('SIGTERM');
        await p.exited;
      }
    });

    it('uws: exits 1 naming the cause when the addon cannot load (else serves on it)', async () => {
      const p = runAgentd(['--agent', await memoryAgent(), '--web-port', '0'], { AGENTD_ENGINE: 'uws', ...noNative });
      const code = await Promise.race([p.exited, listeningPort(p).then(() => 'listening' as const)]);
      if (code === 'listening') {
        expect(p.out()).toMatch(/"engine":"uws".*listening on .*\(uWebSockets\.js\)/);
        p.child.kill('SIGTERM');
        await p.exited;
        return;
      }
      expect(code).toBe(1);
      expect(p.err()).toMatch(/AGENTD_ENGINE=uws, but uWebSockets\.js cannot load on Node v\d+/);
      expect(p.out()).not.toContain('listening on');
    });

    it('refuses a value it does not know, exiting 1', async () => {
      const p = runAgentd(['--agent', await memoryAgent(), '--web-port', '0'], { AGENTD_ENGINE: 'fast' });
      expect(await p.exited).toBe(1);
      expect(p.err()).toContain('AGENTD_ENGINE must be auto, uws or node, not "fast"');
    });
  });
});
