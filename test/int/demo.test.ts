/**
 * `agentd demo` non-interactively (the compiled demo that `npm run demo` runs from the sources): the demo script
 * (simulator + agentd with agents/demo.yml and the real filesystem and memory MCP servers) opens with its title (no
 * JSON log line), runs its scripted WebSocket conversation and exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGENTD_BIN } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';

let data: string | undefined;

afterAll(async () => {
  if (data) await rm(data, { recursive: true, force: true });
});

describe('agentd demo', () => {
  it('streams a reply, calls real MCP tools and exits 0 with AGENTD_DEMO_EXIT=1', async () => {
    data = await mkdtemp(join(tmpdir(), 'agentd-demo-'));
    const child = spawn(process.execPath, [AGENTD_BIN, 'demo'], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...testRunEnv(),
        NO_COLOR: '1',
        AGENTD_DEMO_EXIT: '1',
        AGENTD_DEMO_PORT: '0',
        AGENTD_DEMO_SIM_PORT: '0',
        AGENTD_DEMO_TOKENS_PER_SEC: '200', // paced, so that a reply streams in several reads
        AGENTD_DEMO_DATA: data,
      },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, `stdout:\n${out}\nstderr:\n${err}`).toBe(0);

    // It opens with its own title, and the service's lines are readable (never a raw JSON log line).
    expect(out.split('\n')[0]).toBe('agentd demo');
    expect(out).not.toMatch(/^\{"level"/m);
    expect(out).toMatch(/MCP server\s+filesystem: connected/);
    expect(out).toMatch(/MCP server\s+memory: connected/);
    // Streaming: replies arrive in several chunks that join to them.
    expect(out).toContain('agent › Hi! I am the agentd demo agent.');
    const chunkCounts = [...out.matchAll(/\[response\] (\d+) chunks streamed/g)].map((m) => Number(m[1]));
    expect(chunkCounts).toHaveLength(4 + 5); // the tool conversation, then the small-window one
    // A reply's pieces come 5 ms apart and those read together are one chunk, so a loaded machine that stalls the
    // demo's one process through a whole reply (the first one, say, while its first turn loads code) sees one chunk.
    expect(Math.max(...chunkCounts)).toBeGreaterThan(1);
    // Real tool calls, each toolCall before its toolResult.
    expect(out).toMatch(/\[toolCall\]\s+list_directory on filesystem \{"path":"\."\}/);
    expect(out).toMatch(/\[toolResult\] list_directory ok in \d+ ms: \[FILE\] welcome\.txt/);
    expect(out.indexOf('[toolCall]   read_text_file')).toBeLessThan(out.indexOf('[toolResult] read_text_file'));
    expect(out).toContain('Tool read_text_file returned: Welcome to the agentd demo sandbox.');
    expect(out).toMatch(/\[toolResult\] create_entities ok/);
    expect(out).not.toContain('[error]');
    // The small window: the overflow is compacted away and every turn answered.
    expect(out).toMatch(/\[contextCompacted\] summarised seq ≤ \d+: ~\d+ → ~\d+ tokens \(trigger: overflow\)/);
    // How to go on.
    expect(out).toMatch(/curl -s http:\/\/127\.0\.0\.1:\d+\/api\/message-sync/);
    expect(out).toMatch(/AGENTD_URL=ws:\/\/127\.0\.0\.1:\d+\/ node \S+\/docs\/clients\/chat\.mjs/);
    // The memory server wrote its graph under the data folder it was given.
    expect(await readFile(join(data, 'demo-memory.jsonl'), 'utf8')).toContain('demo-user');
  });
});
