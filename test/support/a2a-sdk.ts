/** Messages and readings of `@a2a-js/sdk`'s clients, shared by the A2A face's tests (both bindings). */
import { Role } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';

/** A fetch that sends `Authorization: Bearer <key>`. */
export const authed =
  (key: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('Authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };

let seq = 0;
export const text = (t: string) => ({
  content: { $case: 'text' as const, value: t },
  metadata: undefined,
  filename: '',
  mediaType: '',
});
export const data = (d: unknown) => ({
  content: { $case: 'data' as const, value: d },
  metadata: undefined,
  filename: '',
  mediaType: '',
});
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
