/**
 * A run's events in the encoding `Accept` asks for: protobuf when it ranks {@link PROTO_MEDIA_TYPE} (q > 0) no
 * lower than SSE, each event as @ag-ui/proto encodes it behind its 4-byte big-endian length (the module loaded
 * on first use); else SSE, `data: <JSON>\n\n` per event.
 */
import type { Event } from '@ag-ui/core';

/** The content type of the protobuf encoding, exactly (how @ag-ui/client chooses its parser). */
export const PROTO_MEDIA_TYPE = 'application/vnd.ag-ui.event+proto';
export const SSE_MEDIA_TYPE = 'text/event-stream';

/** The q of `type` in an Accept header (0 when it is not named). */
function quality(accept: string, type: string): number {
  for (const range of accept.split(',')) {
    const [name, ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    if (name !== type) continue;
    const q = params.find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    return Number.isFinite(value) ? value : 0;
  }
  return 0;
}

export function wantsProtobuf(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const proto = quality(accept, PROTO_MEDIA_TYPE);
  return proto > 0 && proto >= quality(accept, SSE_MEDIA_TYPE);
}

type ProtoModule = { encode(event: Event): Uint8Array };

function framed(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + bytes.length);
  new DataView(out.buffer).setUint32(0, bytes.length, false);
  out.set(bytes, 4);
  return out;
}

export async function* encodeEvents(
  events: AsyncIterable<Event>,
  protobuf: boolean,
): AsyncGenerator<Uint8Array | string> {
  const codec = protobuf ? ((await import('@ag-ui/proto')) as ProtoModule) : undefined;
  for await (const event of events) yield codec ? framed(codec.encode(event)) : `data: ${JSON.stringify(event)}\n\n`;
}
