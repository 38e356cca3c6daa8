/**
 * Server-sent events as the load generator reads them: split on the blank line that ends an event,
 * whatever the network's chunk boundaries, and each event classified from its text without a JSON
 * parse (the generator shares the machine with the servers it measures).
 */

/** What an event means to a stream's tally: a content chunk, an error, or neither. */
export type SseKind = 'chunk' | 'error' | undefined;

/** Feeds text as it arrives; calls `onEvent` with each complete event (its lines, without the blank line). */
export function sseSplitter(onEvent: (event: string) => void): (text: string) => void {
  let rest = '';
  return (text) => {
    rest += text;
    let end: number;
    while ((end = rest.indexOf('\n\n')) >= 0) {
      const event = rest.slice(0, end);
      rest = rest.slice(end + 2);
      onEvent(event);
    }
  };
}

const CONTENT = '"delta":{"content":"';

/** OpenAI chat-completions chunks (the simulator's): a non-empty `delta.content` is a chunk; an `error` object is an error. */
export function openAiEvent(event: string): SseKind {
  const at = event.indexOf(CONTENT);
  if (at >= 0) return event[at + CONTENT.length] === '"' ? undefined : 'chunk';
  return event.startsWith('data: {"error"') ? 'error' : undefined;
}

/** Mastra's agent stream (`POST /api/agents/:id/stream`): a `text-delta` is a chunk; an `error` or `tripwire` ends the turn failed. */
export function mastraEvent(event: string): SseKind {
  const at = event.indexOf('"type":"');
  if (at < 0) return undefined;
  const type = event.slice(at + 8, event.indexOf('"', at + 8));
  return type === 'text-delta' ? 'chunk' : type === 'error' || type === 'tripwire' ? 'error' : undefined;
}

/** The simulator's filler pieces (` word`) in an AG-UI chunk event: its spaces but the one after `data:`. */
export function agUiPieces(event: string): number {
  let n = 0;
  for (let at = event.indexOf(' ', 6); at >= 0; at = event.indexOf(' ', at + 1)) n++;
  return n;
}

/** AG-UI's events (`POST /ag-ui`, one `data: {"type":…}` each): a `TEXT_MESSAGE_CONTENT` is a chunk, a `RUN_ERROR` an error. */
export function agUiEvent(event: string): SseKind {
  if (event.startsWith('data: {"type":"TEXT_MESSAGE_CONTENT"')) return 'chunk';
  return event.startsWith('data: {"type":"RUN_ERROR"') ? 'error' : undefined;
}
