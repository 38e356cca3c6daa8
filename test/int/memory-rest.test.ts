/**
 * /api/memory as users meet it, over real HTTP with named keys (alice, bob; root is an admin): each principal's memory
 * is its own on every route, only an admin names another owner (and writes the shared scope), erase removes the
 * memory from disk (JSONL) or Redis with an audit record, and a restart or a second instance on Redis sees the same.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryAuditLog, ownerDigest } from '../../src/memory/index.ts';
import { pino } from 'pino';
import { createRedisRecordStore, RECORDS_FILE } from '../../src/store/records/index.ts';
import { ALICE, BOB, ROOT, callAs, namedKeys } from '../support/keyed-app.ts';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { appPool, type RunningApp } from '../support/start-app.ts';

const pool = appPool();
const dirs: string[] = [];
afterAll(async () => {
  await pool.stopAll();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const withMemory = (storage: Record<string, unknown>) => ({
  storage,
  server: { auth: { keys: namedKeys } },
  memory: { profileMaxChars: 100 },
});
const as = (app: RunningApp, key: string) => (method: string, path: string, body?: unknown) =>
  callAs(() => app, key, method, path, body);

describe('memory over REST (JSONL)', () => {
  let dir: string;
  let app: RunningApp;
  let alice: ReturnType<typeof as>;
  let bob: ReturnType<typeof as>;
  let root: ReturnType<typeof as>;
  const start = async () => {
    app = await pool.start(withMemory({ type: 'jsonl', dir }));
    [alice, bob, root] = [ALICE, BOB, ROOT].map((key) => as(app, key)) as [typeof alice, typeof bob, typeof root];
  };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentd-memory-rest-'));
    dirs.push(dir);
    await start();
  });

  it("keeps alice's items out of bob's list, search, export and erase", async () => {
    const saved = await alice('POST', '/api/memory', { text: 'Alice drinks green tea every morning', tags: ['tea'] });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({
      success: true,
      owner: 'alice',
      item: { text: expect.any(String), tags: ['tea'] },
    });
    expect((await alice('PUT', '/api/memory/profile', { text: 'Alice, a baker' })).status).toBe(200);
    expect((await bob('POST', '/api/memory', { text: 'Bob drinks coffee' })).status).toBe(201);

    const bobs = await bob('GET', '/api/memory');
    expect(bobs.body).toMatchObject({ owner: 'bob', profile: '', items: [{ text: 'Bob drinks coffee' }] });
    expect(bobs.body.items).toHaveLength(1);
    expect((await bob('GET', '/api/memory?q=tea')).body.hits).toEqual([]);
    const exported = await bob('GET', '/api/memory/export');
    expect(exported.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(JSON.stringify(exported.body)).not.toMatch(/Alice|baker/);
    expect((await bob('DELETE', `/api/memory/${saved.body.item.id}`)).body.error).toMatchObject({
      code: 'MEMORY_ITEM_NOT_FOUND',
    });
    expect((await bob('DELETE', '/api/memory')).body).toMatchObject({ owner: 'bob', erased: { items: 1 } });

    const mine = await alice('GET', '/api/memory?q=tea');
    expect(mine.body).toMatchObject({ owner: 'alice', profile: 'Alice, a baker' });
    expect(mine.body.hits.map((h: any) => [h.item.id, h.shared])).toEqual([[saved.body.item.id, false]]);
    expect((await alice('GET', '/api/memory/export')).body).toMatchObject({
      owner: 'alice',
      profile: 'Alice, a baker',
      items: [{ id: saved.body.item.id }],
    });
  });

  it('lets only an admin name another owner, and write the shared scope every agent reads', async () => {
    const forged: [string, string, unknown?][] = [
      ['GET', '/api/memory?owner=alice'],
      ['GET', '/api/memory/export?owner=alice'],
      ['DELETE', '/api/memory?owner=alice'],
      ['POST', '/api/memory?owner=alice', { text: 'forged' }],
      ['POST', '/api/memory?owner=%40shared', { text: 'forged' }],
      ['PUT', '/api/memory/profile?owner=', { text: 'forged' }],
    ];
    for (const [method, path, body] of forged) {
      const refused = await bob(method, path, body);
      expect([path, refused.status, refused.body.error?.code]).toEqual([path, 403, 'FORBIDDEN']);
    }
    // An owner carried anywhere else than ?owner= is refused too.
    expect((await bob('POST', '/api/memory', { text: 'forged', owner: 'alice' })).status).toBe(400);
    expect((await root('GET', '/api/memory?owner=%00alice')).status).toBe(400);
    expect((await alice('GET', '/api/memory')).body.items.map((i: any) => i.text)).not.toContain('forged');

    expect((await root('GET', '/api/memory?owner=alice')).body.items).toHaveLength(1);
    const shared = await root('POST', '/api/memory?owner=%40shared', { text: 'The tea kitchen is on floor 3' });
    expect(shared.body).toMatchObject({ owner: '@shared' });
    const hits = (await alice('GET', '/api/memory?q=tea')).body.hits.map((h: any) => [h.item.text, h.shared]);
    expect(hits).toEqual(
      expect.arrayContaining([
        ['Alice drinks green tea every morning', false],
        ['The tea kitchen is on floor 3', true],
      ]),
    );
    expect((await bob('GET', '/api/memory?q=tea')).body.hits.map((h: any) => h.shared)).toEqual([true]);
    expect((await alice('GET', '/api/memory')).body.items).toHaveLength(1); // the shared scope is not her list
  });

  it('bounds the profile with an error that says so', async () => {
    const long = await alice('PUT', '/api/memory/profile', { text: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'text', limit: 100 } });
    expect((await alice('GET', '/api/memory')).body.profile).toBe('Alice, a baker');
  });

  it('keeps memory across a restart, and erase removes it from disk with an audit record', async () => {
    const file = join(dir, RECORDS_FILE); // memory lives on the record store, beside the session logs
    expect(await readFile(file, 'utf8')).toContain('green tea');
    await pool.stop(app);
    await start();
    expect((await alice('GET', '/api/memory')).body).toMatchObject({ profile: 'Alice, a baker', items: [{}] });

    const erased = await alice('DELETE', '/api/memory');
    expect(erased.body).toMatchObject({ owner: 'alice', erased: { items: 1, profile: true } });
    expect(await readFile(file, 'utf8')).not.toMatch(/green tea|baker/); // compacted away, not only hidden
    expect((await alice('GET', '/api/memory')).body).toMatchObject({ profile: '', items: [] });
    const audit = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .flatMap((l) => (JSON.parse(l) as { c: { ns: string; val: unknown }[] }).c)
      .filter((c) => c.ns === 'memory.audit')
      .map((c) => c.val);
    expect(audit.at(-1)).toMatchObject({ type: 'memoryErased', by: 'alice', owner: 'alice', items: 1, profile: true });
    expect(JSON.stringify(audit)).not.toMatch(/green tea|baker/);
  });
});

describe('memory off', () => {
  it('answers every memory route 503 memory_off', async () => {
    const app = await pool.start({ server: { auth: { keys: namedKeys } } });
    const alice = as(app, ALICE);
    for (const [method, path] of [
      ['GET', '/api/memory'],
      ['POST', '/api/memory'],
      ['DELETE', '/api/memory'],
      ['GET', '/api/memory/export'],
    ]) {
      const answer = await alice(method!, path!, method === 'POST' ? { text: 'x' } : undefined);
      expect([path, answer.status, answer.body.error?.details?.reason]).toEqual([path, 503, 'memory_off']);
    }
    await pool.stop(app);
  });
});

describe.skipIf(!hasRedisServer())('memory over REST (Redis)', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await pool.stopAll();
    await redis?.stop();
  });

  it('is shared by two instances, and erase deletes its key with an audit record', async () => {
    const keyPrefix = `mem${randomUUID()}:`;
    const config = withMemory({ type: 'redis', url: redis.url, keyPrefix });
    const [one, two] = [await pool.start(config), await pool.start(config)] as [RunningApp, RunningApp];
    const saved = await as(one, ALICE)('POST', '/api/memory', { text: 'Alice drinks green tea' });
    expect(saved.status).toBe(201);
    expect((await as(two, ALICE)('GET', '/api/memory?q=tea')).body.hits[0].item.id).toBe(saved.body.item.id);
    expect((await as(two, BOB)('GET', '/api/memory')).body.items).toEqual([]);

    const probe = createClient({ url: redis.url });
    await probe.connect();
    try {
      const aliceKeys = () => probe.keys(`${keyPrefix}rec:*${ownerDigest('alice')}*`);
      expect((await aliceKeys()).length).toBeGreaterThan(0);
      expect((await as(two, ROOT)('DELETE', '/api/memory?owner=alice')).body.erased).toEqual({
        items: 1,
        profile: false,
      });
      expect(await aliceKeys()).toEqual([]);
      expect((await as(one, ALICE)('GET', '/api/memory')).body.items).toEqual([]);
      const records = createRedisRecordStore({ url: redis.url, keyPrefix, log: pino({ level: 'silent' }) });
      await records.open();
      const audit = await createMemoryAuditLog({ records, ids: () => 'unused', log: pino({ level: 'silent' }) }).read();
      await records.close();
      expect(audit).toEqual([expect.objectContaining({ by: 'root', owner: 'alice', items: 1 })]);
    } finally {
      await probe.close();
    }
  });
});
