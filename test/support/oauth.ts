/**
 * What the OAuth tests do as a person would, over agentd's REST routes: read a server's record, follow its sign-in
 * URL as a browser (the fixture's authorize endpoint redirects to agentd's callback), call a tool, connect a server.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { RECORDS_FILE } from '../../src/store/records/index.ts';
import type { RunningApp } from './start-app.ts';

export interface ServerRec {
  name: string;
  status: string;
  error?: string;
  authorizationUrl?: string;
}

const json = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

export async function serverRecords(app: RunningApp, key: string): Promise<ServerRec[]> {
  const res = await fetch(`${app.url}/api/mcp/servers`, { headers: json(key) });
  return ((await res.json()) as { servers: ServerRec[] }).servers;
}

export const serverRecord = async (app: RunningApp, name: string, key: string) =>
  (await serverRecords(app, key)).find((s) => s.name === name);

export interface ToolCall {
  status: number;
  body: {
    success: boolean;
    data?: { content: { text: string }[] };
    error?: { code: string; message: string; details?: { reason?: string } };
  };
}

export async function executeTool(
  app: RunningApp,
  key: string,
  serverId: string,
  tool: string,
  args: object = {},
): Promise<ToolCall> {
  const res = await fetch(`${app.url}/api/mcp/servers/${serverId}/tools/${tool}/execute`, {
    method: 'POST',
    headers: json(key),
    body: JSON.stringify(args),
  });
  return { status: res.status, body: (await res.json()) as ToolCall['body'] };
}

/** The text of a successful call's first content item. */
export const textOf = (call: ToolCall) => call.body.data?.content[0]?.text;

export async function connectAtRuntime(
  app: RunningApp,
  key: string,
  name: string,
  config: object,
): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
  const res = await fetch(`${app.url}/api/connect-server`, {
    method: 'POST',
    headers: json(key),
    body: JSON.stringify({ name, config }),
  });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
}

/**
 * Follows the authorization URL as a browser would: the authorize endpoint redirects to agentd's callback
 * (`via`: the instance a load balancer in front of the configured redirectUrl would pick; `as`: the person who
 * signs in, for the fixture's `user` tool; `cookie`: what the browser holds, see `cookieOf`).
 */
export async function signIn(
  authorizationUrl: string,
  via?: RunningApp,
  as?: string,
  cookie?: string,
): Promise<{ status: number; html: string; callback: URL }> {
  const callback = await authorize(authorizationUrl, as);
  if (via) callback.host = new URL(via.url).host;
  return { ...(await landAt(callback, cookie)), callback };
}

/** The authorization server's half of a sign-in: where it sends the browser back (agentd's callback, with a code). */
export async function authorize(authorizationUrl: string, as?: string): Promise<URL> {
  const authorized = await fetch(authorizationUrl, {
    redirect: 'manual',
    ...(as !== undefined && { headers: { 'x-fixture-user': as } }),
  });
  expect(authorized.status).toBe(302);
  const callback = new URL(authorized.headers.get('location')!);
  expect(callback.pathname).toBe('/api/oauth/callback');
  return callback;
}

/** agentd's half: the browser lands at the callback, with the cookies it holds. */
export async function landAt(callback: URL, cookie?: string): Promise<{ status: number; html: string }> {
  const landed = await fetch(callback, { ...(cookie !== undefined && { headers: { cookie } }) });
  return { status: landed.status, html: await landed.text() };
}

/** The `Cookie` header a browser would send back for an answer's `Set-Cookie` (its name and value only). */
export const cookieOf = (headers: Headers): string | undefined => headers.get('set-cookie')?.split(';')[0];

/**
 * The secret store's records in a JSONL store's folder (ns `secret` of the record store's file, its lines replayed:
 * src/store/records/jsonl-lines.ts), by key: each the text the secret store keeps.
 */
export async function secretRecords(dataDir: string): Promise<Map<string, string>> {
  const kept = new Map<string, string>();
  const text = await readFile(join(dataDir, RECORDS_FILE), 'utf8');
  for (const line of text.split('\n').filter(Boolean)) {
    const { c } = JSON.parse(line) as { c: { ns: string; id: string; d?: 1; val?: string }[] };
    for (const change of c.filter((x) => x.ns === 'secret'))
      if (change.d === 1) kept.delete(change.id);
      else kept.set(change.id, change.val!);
  }
  return kept;
}
