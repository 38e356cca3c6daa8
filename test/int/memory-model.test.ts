/**
 * The model's memory as a user meets it (issue 62): the real service, the simulated model scripted to call the
 * built-in memory tools, named keys for alice and bob. What alice's agent saves in one session reaches a new session of
 * hers (working memory in the system prompt, a search result), after a restart (JSONL) and on a second instance
 * (Redis); bob's requests never carry it; the tool policy asks before `memory_forget`; a compaction keeps the profile;
 * with memory off no memory tool is offered and nothing is written.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { RecordedRequest, WireMessage } from '../../tools/simulator/index.ts';
import { ALICE, BOB, namedKeys, ROOT as ROOT_KEY } from '../support/keyed-app.ts';
import { ROOT } from '../support/paths.ts';
import { roomyLimits, textOf, useSimulatorAndFolder } from '../support/messaging.ts';
import { hasRedisServer, startRedis } from '../support/redis.ts';
import type { RunningApp } from '../support/start-app.ts';
import { PATIENT } from '../support/wait.ts';

const env = useSimulatorAndFolder('agentd-memory-model-');

const FACT = 'The user has a cat called Miso';
const PROFILE = 'Has a cat called Miso. Prefers short answers.';

async function say(app: RunningApp, key: string, sessionId: string, message: string) {
  const res = await fetch(`${app.url}/api/message-sync`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ sessionId, message, include: ['tools'] }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const tool = (name: string, args: unknown) => `[[tool:${name} ${JSON.stringify(args)}]]`;
/** Requests the simulator received whose user messages hold `marker` (each principal marks its own). */
const requestsOf = (marker: string): RecordedRequest[] =>
  env.sim.requests.filter((r) => r.body.messages.some((m) => m.role === 'user' && textOf(m).includes(marker)));
const systemOf = (r: RecordedRequest | undefined): string => textOf(r?.body.messages[0]);
const toolNames = (r: RecordedRequest | undefined): string[] =>
  (r?.body.tools ?? []).map((t: any) => t.function?.name as string);
const toolMessages = (r: RecordedRequest | undefined): string[] =>
  (r?.body.messages ?? []).filter((m: WireMessage) => m.role === 'tool').map(textOf);
/** The last request of a turn whose message holds `marker` (the one with the tool results). */
const lastWith = (marker: string) => requestsOf(marker).at(-1);

const memoryOn = (dir: string, doc: Record<string, unknown> = {}) => ({
  storage: { type: 'jsonl', dir },
  server: { ...roomyLimits, auth: { keys: namedKeys } },
  memory: {},
  llm: { timeoutMs: 10_000 },
  ...doc,
});

describe('memory on (JSONL)', () => {
  let app: RunningApp;
  const dir = () => join(env.dir, 'on');

  it("alice's fact, saved in one session, reaches a new session of hers and never bob's", async () => {
    app = await env.apps.start(memoryOn(dir()), { modelUrl: env.sim.url });
    const saved = await say(app, ALICE, 'first', `(alice:1) my cat is Miso ${tool('memory_save', { text: FACT })}`);
    expect(saved.status).toBe(200);
    expect(saved.body.response).toMatch(/^Tool memory_save returned: Saved as \S+\.$/);
    expect(saved.body.tools).toEqual([
      expect.objectContaining({ name: 'memory_save', server: 'agentd:memory', ok: true }),
    ]);
    expect(toolNames(requestsOf('(alice:1)')[0])).toEqual(
      expect.arrayContaining(['memory_save', 'memory_search', 'memory_forget', 'memory_profile']),
    );
    const profiled = await say(app, ALICE, 'first', `(alice:2) ${tool('memory_profile', { text: PROFILE })}`);
    expect(profiled.body.response).toBe('Tool memory_profile returned: Working memory updated.');

    const recalled = await say(app, ALICE, 'second', `(alice:3) my cat? ${tool('memory_search', { query: 'cat' })}`);
    expect(recalled.body.response).toContain(FACT);
    // Each request of the new session's turn carries the profile in its system prompt, and the search found the fact.
    for (const r of requestsOf('(alice:3)')) expect(systemOf(r)).toContain(PROFILE);
    expect(toolMessages(lastWith('(alice:3)')).join('\n')).toContain(FACT);

    const asked = await say(app, BOB, 'first', `(bob:1) my cat? ${tool('memory_search', { query: 'cat' })}`);
    expect(asked.body.response).toBe('Tool memory_search returned: Nothing remembered matches.');
    await say(app, BOB, 'second', '(bob:2) hello');
    const bobs = requestsOf('(bob:');
    expect(bobs.length).toBe(3);
    for (const r of bobs) {
      expect(JSON.stringify(r.body)).not.toContain('Miso');
      expect(systemOf(r)).not.toContain('<working-memory>');
    }
  });

  it('the tool policy asks before memory_forget; once approved the item is gone', async () => {
    const asking = await env.apps.start(
      memoryOn(join(env.dir, 'ask'), {
        toolPolicy: { default: 'allow', rules: [{ server: 'agentd:memory', tool: 'memory_forget', action: 'ask' }] },
      }),
      { modelUrl: env.sim.url },
    );
    const saved = await say(asking, ALICE, 'ask', `(alice:ask1) ${tool('memory_save', { text: 'Alice likes figs' })}`);
    const id = /Saved as (\S+)\./.exec(saved.body.response)![1]!;
    const forgetting = say(asking, ALICE, 'ask', `(alice:ask2) ${tool('memory_forget', { id })}`);
    const headers = { Authorization: `Bearer ${ALICE}`, 'Content-Type': 'application/json' };
    const pending = await vi.waitFor(async () => {
      const res = await fetch(`${asking.url}/api/sessions/ask/approvals`, { headers });
      const { approvals } = (await res.json()) as { approvals: any[] };
      if (approvals.length !== 1) throw new Error('no pending approval yet');
      return approvals[0];
    }, PATIENT);
    expect(pending).toMatchObject({ serverId: 'agentd:memory', toolName: 'memory_forget', args: { id } });
    const answered = await fetch(`${asking.url}/api/sessions/ask/approvals/${pending.callId}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(answered.status).toBe(200);
    expect((await forgetting).body.response).toBe(`Tool memory_forget returned: Forgot ${id}.`);
    const searched = await say(asking, ALICE, 'ask', `(alice:ask3) ${tool('memory_search', { query: 'figs' })}`);
    expect(searched.body.response).toBe('Tool memory_search returned: Nothing remembered matches.');
    await env.apps.stop(asking);
  });

  it('a compaction keeps the profile: it is part of the system prompt, not of the history', async () => {
    for (const n of [1, 2, 3]) await say(app, ALICE, 'long', `(alice:long${n}) turn ${n}`);
    const compacted = await fetch(`${app.url}/api/sessions/long/compact`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ALICE}` },
    });
    expect(((await compacted.json()) as any).compacted).toBe(true);
    await say(app, ALICE, 'long', '(alice:long4) four');
    const after = lastWith('(alice:long4)');
    // The summary replaced the first turn (joined to the system message), and the profile is still there.
    expect(after?.body.messages.some((m) => m.role === 'user' && textOf(m).includes('(alice:long1)'))).toBe(false);
    expect(systemOf(after)).toContain('Summary of 1 user messages');
    expect(systemOf(after)).toContain(PROFILE);
  });

  it('a tool result is bounded like any tool result', async () => {
    const bounded = await env.apps.start(memoryOn(join(env.dir, 'bounded'), { toolResultMaxBytes: 300 }), {
      modelUrl: env.sim.url,
    });
    await say(bounded, ALICE, 'b', `(alice:b1) ${tool('memory_save', { text: `walrus ${'x'.repeat(1000)}` })}`);
    await say(bounded, ALICE, 'b', `(alice:b2) ${tool('memory_search', { query: 'walrus' })}`);
    const result = toolMessages(lastWith('(alice:b2)')).at(-1);
    expect(Buffer.byteLength(result!)).toBeLessThanOrEqual(300);
    expect(result).toMatch(/\[\.\.\. truncated \d+ bytes by agentd\]$/);
    await env.apps.stop(bounded);
  });

  it('a restart keeps it: a new session after the restart carries the profile and finds the fact', async () => {
    await env.apps.stop(app);
    app = await env.apps.start(memoryOn(dir()), { modelUrl: env.sim.url });
    const recalled = await say(app, ALICE, 'third', `(alice:4) ${tool('memory_search', { query: 'Miso' })}`);
    expect(recalled.body.response).toContain(FACT);
    expect(systemOf(requestsOf('(alice:4)')[0])).toContain(PROFILE);
    await env.apps.stop(app);
  });
});

describe('memory on beside a tool server named memory', () => {
  it('starts with the reference memory server named `memory` (as agents/demo.yml names it) and offers both sets of tools', async () => {
    const server = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
    const graph = join(env.dir, 'beside', 'graph.jsonl');
    const app = await env.apps.start(
      memoryOn(join(env.dir, 'beside'), {
        mcpServers: {
          memory: { type: 'stdio', command: process.execPath, args: [server], env: { MEMORY_FILE_PATH: graph } },
        },
      }),
      { modelUrl: env.sim.url },
    );
    const admin = { Authorization: `Bearer ${ROOT_KEY}` };
    await expect
      .poll(async () => {
        const res = await fetch(`${app.url}/api/mcp/servers`, { headers: admin });
        return ((await res.json()) as { servers: { name: string; status: string }[] }).servers;
      }, PATIENT)
      .toEqual([expect.objectContaining({ name: 'memory', status: 'connected' })]);
    const graphRead = await say(app, ALICE, 'beside', `(alice:beside1) ${tool('read_graph', {})}`);
    expect(graphRead.body.tools).toEqual([expect.objectContaining({ name: 'read_graph', server: 'memory', ok: true })]);
    const offered = toolNames(requestsOf('(alice:beside1)')[0]);
    expect(offered).toEqual(expect.arrayContaining(['read_graph', 'create_entities', 'memory_save', 'memory_search']));
    const saved = await say(app, ALICE, 'beside', `(alice:beside2) ${tool('memory_save', { text: 'Likes graphs' })}`);
    expect(saved.body.tools).toEqual([
      expect.objectContaining({ name: 'memory_save', server: 'agentd:memory', ok: true }),
    ]);
    await env.apps.stop(app);
  });

  it("refuses a rule naming server `memory` when no tool server has that name (the memory tools' former id)", async () => {
    await expect(
      env.apps.start(
        memoryOn(join(env.dir, 'old-rule'), {
          toolPolicy: { rules: [{ server: 'memory', tool: 'memory_forget', action: 'ask' }] },
        }),
        { modelUrl: env.sim.url },
      ),
    ).rejects.toThrow(/the built-in memory tools' server is "agentd:memory"/);
  });
});

describe('memory off', () => {
  it('offers no memory tool and writes nothing', async () => {
    const dir = join(env.dir, 'off');
    const off = await env.apps.start(
      { storage: { type: 'jsonl', dir }, server: { ...roomyLimits, auth: { keys: namedKeys } } },
      { modelUrl: env.sim.url },
    );
    const reply = await say(off, ALICE, 'off', `(alice:off) ${tool('memory_save', { text: FACT })}`);
    expect(reply.body.response).toContain('Unknown tool "memory_save"');
    for (const r of requestsOf('(alice:off)')) {
      expect(toolNames(r).filter((n) => n.startsWith('memory_'))).toEqual([]);
      expect(systemOf(r)).not.toContain('<working-memory>');
    }
    expect(existsSync(join(dir, '.agentd-memory'))).toBe(false);
    await env.apps.stop(off);
  });
});

describe.skipIf(!hasRedisServer())('memory on Redis', () => {
  it('a second instance sharing the Redis sees what the first saved', async () => {
    const redis = await startRedis();
    try {
      const storage = { type: 'redis', url: redis.url, keyPrefix: `mem${randomUUID()}:` };
      const doc = { ...memoryOn(''), storage };
      const one = await env.apps.start(doc, { modelUrl: env.sim.url });
      const two = await env.apps.start(doc, { modelUrl: env.sim.url });
      await say(one, ALICE, 'r1', `(alice:r1) ${tool('memory_save', { text: 'Alice rides a red bicycle' })}`);
      await say(one, ALICE, 'r1', `(alice:r2) ${tool('memory_profile', { text: 'Cycles to work.' })}`);
      const recalled = await say(two, ALICE, 'r2', `(alice:r3) ${tool('memory_search', { query: 'bicycle' })}`);
      expect(recalled.body.response).toContain('Alice rides a red bicycle');
      expect(systemOf(requestsOf('(alice:r3)')[0])).toContain('Cycles to work.');
      await say(two, BOB, 'r3', `(bob:r1) ${tool('memory_search', { query: 'bicycle' })}`);
      for (const r of requestsOf('(bob:r1)')) {
        expect(JSON.stringify(r.body)).not.toContain('Alice rides');
        expect(JSON.stringify(r.body)).not.toContain('Cycles to work');
      }
      await env.apps.stop(one);
      await env.apps.stop(two);
    } finally {
      await redis.stop();
    }
  });
});
