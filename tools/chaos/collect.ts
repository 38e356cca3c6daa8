/**
 * Reading a chaos run's outcome off agentd's REST API (any instance: they share the store) and the files it left:
 * every session (`GET /api/sessions`, paged) with its export (`…/export?reasoning=true`, NDJSON) and its durable
 * frames (`…/history`), a schedule's runs, the webhook deliveries still pending, and the marker file's lines.
 * `openTurns` says which turns a set of logs leaves without an ending (what the run waits for as it settles).
 */
import { readFile } from 'node:fs/promises';
import { call } from './http.ts';
import type { LogLine, RunRecord, SessionRecord } from './recorded.ts';

const enc = encodeURIComponent;

export async function sessionIds(base: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(base, 'GET', `/api/sessions?limit=500${cursor ? `&cursor=${enc(cursor)}` : ''}`);
    if (page.status !== 200) throw new Error(`GET /api/sessions answered ${page.status} ${page.error ?? page.text}`);
    const body = page.body as { sessions: { id: string }[]; nextCursor?: string };
    for (const s of body.sessions) ids.push(s.id);
    cursor = body.nextCursor;
  } while (cursor);
  return ids;
}

export async function exportOf(base: string, id: string): Promise<LogLine[]> {
  const answer = await call(base, 'GET', `/api/sessions/${enc(id)}/export?reasoning=true`, undefined, {
    timeoutMs: 30_000,
  });
  if (answer.status !== 200) throw new Error(`export of ${id} answered ${answer.status} ${answer.error ?? ''}`);
  return answer.text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LogLine);
}

export async function readSessions(base: string, withHistory: boolean): Promise<SessionRecord[]> {
  const records: SessionRecord[] = [];
  for (const id of await sessionIds(base)) {
    const log = await exportOf(base, id);
    let history: SessionRecord['history'] = [];
    if (withHistory) {
      const answer = await call(base, 'GET', `/api/sessions/${enc(id)}/history`, undefined, { timeoutMs: 30_000 });
      if (answer.status !== 200) throw new Error(`history of ${id} answered ${answer.status}`);
      history = (answer.body as { events: SessionRecord['history'] }).events;
    }
    records.push({ id, log, history });
  }
  return records;
}

/** Turns that started (a `userMessage` or `messageQueued`) with no ending in their log: `<session> <turn>`. */
export function openTurns(sessions: SessionRecord[]): string[] {
  const open: string[] = [];
  for (const s of sessions) {
    const started = new Set<string>();
    const ended = new Set<string>();
    for (const { event } of s.log) {
      if (event.turnId === undefined) continue;
      if (event.type === 'userMessage' || event.type === 'messageQueued') started.add(event.turnId);
      if (event.type === 'response' || event.type === 'turnFailed') ended.add(event.turnId);
    }
    for (const t of started) if (!ended.has(t)) open.push(`${s.id} ${t}`);
  }
  return open;
}

export async function runsOf(base: string, scheduleId: string): Promise<RunRecord[]> {
  const answer = await call(base, 'GET', `/api/schedules/${enc(scheduleId)}/runs?limit=1000`);
  if (answer.status !== 200) throw new Error(`runs of ${scheduleId} answered ${answer.status} ${answer.text}`);
  return (answer.body as { runs: RunRecord[] }).runs;
}

export async function pendingDeliveries(base: string, webhookId: string): Promise<number> {
  const answer = await call(base, 'GET', `/api/webhooks/${enc(webhookId)}/deliveries?limit=1000`);
  if (answer.status !== 200) return Infinity;
  const { deliveries } = answer.body as { deliveries: { status: string }[] };
  return deliveries.filter((d) => d.status === 'pending').length;
}

export async function markerLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((l) => l !== '');
}
