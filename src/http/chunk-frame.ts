/** `chunk` frames (the hot path) written out: exactly `frame('chunk', asNamed(data))` for every data. */
import { asNamed, sessionIdOf } from '../session-id.ts';
import { frame } from './frames.ts';
import type { FrontEvents } from './front-bus.ts';

const HEAD = '{"event":"chunk","data":{"content":';

type ChunkData = FrontEvents['agent.chunk'];

/** A plain object of exactly the chunk's keys, in its order, of its types. */
function isChunkData(value: unknown): value is ChunkData {
  const data = value as Partial<ChunkData> | null;
  if (typeof data?.content !== 'string' || typeof data.sessionId !== 'string') return false;
  if (typeof data.turnId !== 'string' || typeof data.seq !== 'number') return false;
  if (Object.getPrototypeOf(data) !== Object.prototype) return false;
  const keys = Object.keys(data);
  return (
    keys.length === 4 && keys[0] === 'content' && keys[1] === 'sessionId' && keys[2] === 'turnId' && keys[3] === 'seq'
  );
}

export function createChunkFrames(): (data: unknown) => string {
  return (data) => {
    if (!isChunkData(data)) return frame('chunk', asNamed(data as { sessionId?: string }));
    const { content, sessionId, turnId, seq } = data;
    return `${HEAD}${JSON.stringify(content)},"sessionId":${JSON.stringify(sessionIdOf(sessionId))},"turnId":${JSON.stringify(turnId)},"seq":${JSON.stringify(seq)}}}`;
  };
}
