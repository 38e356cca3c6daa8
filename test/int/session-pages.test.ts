/**
 * `GET /api/sessions` a page at a time (issue 40, item 5), over real HTTP on every store engine:
 * more sessions than a page, pages that neither skip nor repeat a session while sessions come and
 * go, bad `limit` and `cursor` refused with the error envelope, and principals that page through
 * their own sessions only (an admin through everyone's).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRedisServer, startRedis, type RedisServer } from '../support/redis.ts';
import { startApp, type RunningApp } from '../support/start-app.ts';
import { ALICE, BOB, ROOT, namedKeys } from '../support/keyed-app.ts';

const keys = namedKeys;
const roomy = { limits: { rest: { points: 100_000 }, connectionsPerIp: 100 } };

interface Listed {
  id: string;
  owner?: string;
  lastSeq: number;
}
interface Page {
  sessions: Listed[];
  nextCursor?: string;
}

const headers = (key?: string): Record<string, string> => (key ? { Authorization: `Bearer ${key}` } : {});

async function getJson(app: RunningApp, path: string, key?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${app.url}${path}`, { headers: headers(key) });
  return { status: res.status, body: await res.json() };
}

/** A new session (an import: no model turn) of the caller's; its id. */
async function newSession(app: RunningApp, key?: string): Promise<string> {
  const line = JSON.stringify({
    seq: 1,
    ts: '2026-01-01T00:00:00.000Z',
    event: { v: 4, type: 'userMessage', turnId: 't1', content: 'hi' },
  });
  const res = await fetch(`${app.url}/api/sessions/import`, {
    method: 'POST',
    headers: { ...headers(key), 'Content-Type': 'application/x-ndjson' },
    body: `${line}\n`,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { sessionId: string }).sessionId;
}

const many = async (app: RunningApp, n: number, key?: string): Promise<string[]> => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await newSession(app, key));
  return ids;
};

/** Every page from the first on, `between` run after each page but the last (given their number, from 1); the pages as answered. */
async function allPages(
  app: RunningApp,
  query: string,
  key?: string,
  between?: (count: number, last: Page) => Promise<void>,
): Promise<Page[]> {
  const pages: Page[] = [];
  for (let cursor: string | undefined; ;) {
    const { status, body } = await getJson(app, `/api/sessions?${query}${cursor ? `&cursor=${cursor}` : ''}`, key);
    expect(status).toBe(200);
    pages.push(body as Page);
    cursor = (body as Page).nextCursor;
    if (cursor === undefined) return pages;
    await between?.(pages.length, body as Page);
  }
}

const idsOf = (pages: Page[]) => pages.flatMap((p) => p.sessions.map((s) => s.id));
/** Code point order, as the store lists. */
const sorted = (ids: string[]) => [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

const redisEnabled = hasRedisServer();
let redis: RedisServer | undefined;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentd-pages-'));
  if (redisEnabled) redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
  await rm(dir, { recursive: true, force: true });
});

const engines = [
  { name: 'memory', storage: () => ({ type: 'memory' }) },
  { name: 'jsonl', storage: () => ({ type: 'jsonl', dir: join(dir, randomUUID()) }) },
  ...(redisEnabled
    ? [{ name: 'redis', storage: () => ({ type: 'redis', url: redis!.url, keyPrefix: `pages${randomUUID()}:` }) }]
    : []),
];

describe.each(engines)('GET /api/sessions on the $name store', ({ storage }) => {
  describe('without principals', () => {
    let app: RunningApp;
    let ids: string[];
    beforeAll(async () => {
      app = await startApp({ storage: storage(), server: roomy });
      ids = await many(app, 105);
    });
    afterAll(() => app.stop());

    it('answers 100 sessions a page by default, then the rest with no nextCursor', async () => {
      const pages = await allPages(app, '');
      expect(pages.map((p) => p.sessions.length)).toEqual([100, 5]);
      expect(pages[0]?.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(pages[1]?.nextCursor).toBeUndefined();
      expect(idsOf(pages)).toEqual(sorted(ids));
      expect(pages[0]?.sessions[0]).toMatchObject({
        lastSeq: expect.any(Number),
        updatedAt: expect.any(String),
        busy: false,
        queued: 0,
      });
    });

    it('pages of `limit` list every session once while sessions are created and deleted between pages', async () => {
      const order = sorted(ids);
      const gone: string[] = [];
      const made: { id: string; cursorAt: string }[] = [];
      const pages = await allPages(app, 'limit=7', undefined, async (page, last) => {
        if (page > 3) return;
        // One already listed and one not listed yet go; two come.
        const listedAlready = order[page * 7 - 3]!;
        const notYet = order[page * 7 + 20]!;
        for (const id of [listedAlready, notYet]) {
          expect((await fetch(`${app.url}/api/sessions/${id}`, { method: 'DELETE' })).status).toBe(200);
          gone.push(id);
        }
        for (const id of await many(app, 2)) made.push({ id, cursorAt: last.sessions.at(-1)!.id });
      });
      const listed = idsOf(pages);
      expect(new Set(listed).size).toBe(listed.length); // nothing twice
      expect(listed).toEqual(sorted(listed)); // in order
      expect(pages.slice(0, -1).every((p) => p.sessions.length === 7)).toBe(true);
      // Every session that lived throughout, once; none deleted before its page.
      const throughout = ids.filter((id) => !gone.includes(id));
      expect(listed.filter((id) => ids.includes(id) && !gone.includes(id))).toEqual(sorted(throughout));
      for (const id of gone.filter((_, i) => i % 2 === 1)) expect(listed).not.toContain(id);
      // One created meanwhile is listed when its key sorts after the cursor of the page it was created behind.
      for (const { id, cursorAt } of made) expect(listed.includes(id), id).toBe(id > cursorAt);
      ids = [...throughout, ...made.map((m) => m.id)];
    });

    it('refuses a bad limit or cursor with the error envelope (400 INVALID_REQUEST naming the field)', async () => {
      const first = (await getJson(app, '/api/sessions?limit=1')).body as Page;
      const cursor = first.nextCursor!;
      const tampered = Buffer.from(JSON.stringify({ v: 2, after: 'x' })).toString('base64url');
      const cases: [string, string][] = [
        ['limit=0', 'limit'],
        ['limit=501', 'limit'],
        ['limit=abc', 'limit'],
        ['limit=2.5', 'limit'],
        ['limit=', 'limit'],
        ['cursor=nope!', 'cursor'],
        [`cursor=${tampered}`, 'cursor'],
        [`cursor=${cursor}%3D`, 'cursor'],
        [`cursor=${Buffer.from('not json').toString('base64url')}`, 'cursor'],
        [`cursor=${'A'.repeat(3000)}`, 'cursor'],
        ['cursor=', 'cursor'],
      ];
      for (const [query, field] of cases) {
        const { status, body } = await getJson(app, `/api/sessions?${query}`);
        expect(status, query).toBe(400);
        expect(body, query).toEqual({
          success: false,
          error: { code: 'INVALID_REQUEST', message: expect.stringContaining(field), details: { field } },
          timestamp: expect.any(String),
        });
      }
      expect((await getJson(app, '/api/sessions?limit=500')).status).toBe(200);
      expect((await getJson(app, `/api/sessions?limit=1&cursor=${cursor}`)).body.sessions).toHaveLength(1);
    });
  });

  describe('with principals', () => {
    let app: RunningApp;
    const mine: Record<string, string[]> = {};
    beforeAll(async () => {
      app = await startApp({ storage: storage(), server: { ...roomy, auth: { keys } } });
      mine.alice = await many(app, 12, ALICE);
      mine.bob = await many(app, 9, BOB);
      mine.root = await many(app, 2, ROOT);
    });
    afterAll(() => app.stop());

    it('a principal pages through its own sessions only', async () => {
      for (const [name, key] of [
        ['alice', ALICE],
        ['bob', BOB],
      ] as const) {
        const pages = await allPages(app, 'limit=5', key);
        expect(pages.map((p) => p.sessions.length)).toEqual(name === 'alice' ? [5, 5, 2] : [5, 4]);
        expect(idsOf(pages)).toEqual(sorted(mine[name]!));
        expect(pages.flatMap((p) => p.sessions).every((s) => s.owner === name)).toBe(true);
      }
    });

    it("another principal's cursor shows nothing of theirs", async () => {
      const bobs = (await getJson(app, '/api/sessions?limit=3', BOB)).body as Page;
      const { status, body } = await getJson(app, `/api/sessions?limit=50&cursor=${bobs.nextCursor}`, ALICE);
      expect(status).toBe(200);
      expect((body as Page).sessions.every((s) => s.owner === 'alice')).toBe(true);
      expect((body as Page).nextCursor).toBeUndefined();
    });

    it("an admin pages through every principal's sessions, each with its owner", async () => {
      const pages = await allPages(app, 'limit=4', ROOT);
      const listed = pages.flatMap((p) => p.sessions).map((s) => `${s.owner}/${s.id}`);
      const expected = Object.entries(mine).flatMap(([owner, list]) => list.map((id) => `${owner}/${id}`));
      expect(listed.sort()).toEqual(expected.sort());
      expect(pages.slice(0, -1).every((p) => p.sessions.length === 4)).toBe(true);
    });
  });
});
