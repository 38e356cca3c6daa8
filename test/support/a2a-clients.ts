/**
 * `@a2a-js/sdk`'s own clients against a running agentd (v1.0 `ClientFactory` from the card, v0.3
 * `LegacyJsonRpcTransport`), and the parts and messages the tests send with them.
 */
import { Role, TaskState, type ListTasksRequest } from '@a2a-js/sdk';
import { Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import type { RunningApp } from './start-app.ts';

/** `fetch` with `Authorization: Bearer <key>` on every request. */
export const authed =
  (key: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('Authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };

/** A v1.0 client of the SDK, from the card at `app.url`. */
export const v1Client = (app: RunningApp, key: string): Promise<Client> =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authed(key) })],
    }),
  ).createFromUrl(app.url);

/** A v0.3 client of the SDK (no `A2A-Version` header). */
export async function v03Client(app: RunningApp, key: string): Promise<Client> {
  const card = await (await v1Client(app, key)).getAgentCard();
  return new Client(new LegacyJsonRpcTransport({ endpoint: `${app.url}/a2a`, fetchImpl: authed(key) }), card);
}

const part = (content: { $case: string; value: unknown }, mediaType = '', filename = '') => ({
  content,
  metadata: undefined,
  filename,
  mediaType,
});
export const text = (t: string) => part({ $case: 'text', value: t });
export const data = (d: unknown) => part({ $case: 'data', value: d });
/** A file part with its bytes inline. */
export const rawFile = (bytes: Buffer, mediaType: string, filename = '') =>
  part({ $case: 'raw', value: bytes }, mediaType, filename);
/** A file part by URL. */
export const urlFile = (url: string, mediaType: string) => part({ $case: 'url', value: url }, mediaType);

let seq = 0;
export const userMessage = (parts: unknown[], extra: Record<string, unknown> = {}): any => ({
  messageId: `m-${++seq}`,
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
  ...extra,
});
export const send = (client: Client, parts: unknown[], extra: Record<string, unknown> = {}): Promise<any> =>
  client.sendMessage({ message: userMessage(parts, extra) } as any);

/** A whole ListTasksRequest (the SDK writes an absent `status` as "UNRECOGNIZED", which a server refuses). */
export const listRequest = (fields: Partial<ListTasksRequest>): ListTasksRequest => ({
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
  ...fields,
});

export const replyOf = (task: any): string =>
  (task.artifacts ?? []).flatMap((a: any) => a.parts.map((p: any) => p.content?.value ?? '')).join('');
/** The reply artifact as a client builds it from stream events: `append` adds, otherwise it is replaced. */
export const foldArtifact = (start: string, events: any[]): string =>
  events
    .filter((e) => e.payload?.$case === 'artifactUpdate')
    .reduce(
      (acc: string, e) => (e.payload.value.append ? acc : '') + replyOf({ artifacts: [e.payload.value.artifact] }),
      start,
    );

/** One raw JSON-RPC call to `/a2a` (what the SDK cannot express); the HTTP status and the parsed body. */
export async function rawRpc(
  app: RunningApp,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${app.url}/a2a`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
