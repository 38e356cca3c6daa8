/**
 * The directive grammar: instructions to the simulated model written inside the text of the LAST
 * user message, so tests drive the simulator through the real agent.
 *
 *   directive := "[[" NAME [ ":" VALUE ] { SP ( KEY "=" WORD | JSON-OBJECT ) } "]]"
 *
 * NAME is one of the names below; any other `[[...]]` is ordinary text. VALUE and WORD are runs
 * of characters other than whitespace and `]` (for `reply` and `reasoning`, VALUE is everything up to `]]`).
 * JSON-OBJECT is a balanced `{...}` (strings may hold brackets). Directives are removed from the
 * text the echo reply repeats.
 *
 *   [[tool:NAME {json}]]      call tool NAME with these arguments (default {}); several → parallel calls
 *   [[badjson:NAME]]          call tool NAME with malformed argument JSON
 *   [[loop:NAME {json}]]      call NAME again on every step, even after tool results
 *   [[error:STATUS retry-after=SEC times=N after=K message=WORD]]
 *                             answer HTTP STATUS with an OpenAI error body; retry-after sets the
 *                             Retry-After header (seconds, fractions allowed); times=N fails only the
 *                             first N requests of this conversation; after=K streams K pieces first
 *                             and then sends an SSE error event instead
 *   [[stall:MS after=K]]      pause MS ms mid-stream after K pieces (default half of them)
 *   [[disconnect after=K]]    drop the connection after K pieces (default half of them)
 *   [[truncate after=K times=N]]
 *                             streaming only: end the stream cleanly after K pieces (default all of
 *                             them) without its final event (Chat: finish_reason and [DONE]; Responses:
 *                             response.completed; Messages: message_delta and message_stop); times=N
 *                             only for the first N requests of this conversation
 *   [[html]]                  answer 200 text/html (a proxy's or a web server's page), streamed or not
 *   [[len:N]]                 reply with N filler pieces
 *   [[reply:TEXT]]            reply with exactly TEXT
 *   [[reasoning:TEXT]]        reason TEXT before every answer of the turn (reasoning_content on chat,
 *                             a reasoning item on responses, a signed thinking block on messages)
 *   [[ttft:MS]]               delay the first piece by MS ms
 *   [[rate:TPS]]              stream TPS pieces per second
 *   [[argchunk:CHARS]]        stream tool arguments in deltas of CHARS characters
 *   [[filter]]                the content filter withholds the reply: no text, finish reason
 *                             content_filter (Responses: incomplete, reason content_filter;
 *                             Messages: stop_reason refusal)
 *   [[image]]                 say whether the last user message had an image part, its type and size
 *   [[window:N]]              the conversation's model has a context window of N tokens (found in any
 *                             user or system message of a request, see server.ts)
 *   [[cost:AMOUNT]]           Chat usage reports `cost: AMOUNT` (USD), as OpenRouter does, on every answer of the turn
 *   [[cached:N]]              Chat usage reports N prompt tokens (at most all) as read from the cache
 *                             (`prompt_tokens_details.cached_tokens`), on every answer of the turn
 *
 * A recognised name with a bad value or an unknown key is a DirectiveError (the simulator answers 400).
 */

export type Directive =
  | { kind: 'tool' | 'loop'; name: string; args: string }
  | { kind: 'badjson'; name: string }
  | { kind: 'error'; status: number; retryAfterSec?: number; times?: number; afterTokens?: number; message?: string }
  | { kind: 'stall'; ms: number; afterTokens?: number }
  | { kind: 'disconnect'; afterTokens?: number }
  | { kind: 'truncate'; afterTokens?: number; times?: number }
  | { kind: 'html' }
  | { kind: 'len'; tokens: number }
  | { kind: 'reply'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'ttft'; ms: number }
  | { kind: 'rate'; tokensPerSec: number }
  | { kind: 'argchunk'; chars: number }
  | { kind: 'image' }
  | { kind: 'filter' }
  | { kind: 'window'; tokens: number }
  | { kind: 'cost'; amount: number }
  | { kind: 'cached'; tokens: number };

export class DirectiveError extends Error {
  override name = 'DirectiveError';
}

export interface ParsedText {
  directives: Directive[];
  /** The text with directives removed and surrounding whitespace trimmed. */
  rest: string;
}

const NAMES = new Set([
  'tool',
  'loop',
  'badjson',
  'error',
  'stall',
  'disconnect',
  'truncate',
  'html',
  'len',
  'reply',
  'reasoning',
  'ttft',
  'rate',
  'argchunk',
  'image',
  'filter',
  'window',
  'cost',
  'cached',
]);

interface RawDirective {
  name: string;
  value: string | undefined;
  params: Map<string, string>;
  json: string | undefined;
  source: string;
}

/** Finds and interprets every directive in `text`. Cheap when the text has no `[[`. */
export function parseDirectives(text: string): ParsedText {
  let at = text.indexOf('[[');
  if (at < 0) return { directives: [], rest: text.trim() };
  const directives: Directive[] = [];
  let rest = '';
  let copied = 0;
  while (at >= 0) {
    const raw = scan(text, at);
    if (raw) {
      directives.push(interpret(raw));
      rest += text.slice(copied, at);
      copied = at + raw.source.length;
      at = text.indexOf('[[', copied);
    } else {
      at = text.indexOf('[[', at + 2);
    }
  }
  rest += text.slice(copied);
  return { directives, rest: rest.replace(/\s{2,}/g, ' ').trim() };
}

/** Reads one directive starting at `start` ("[["), or undefined when the name is not ours. */
function scan(text: string, start: number): RawDirective | undefined {
  const nameMatch = /^[a-z]+/.exec(text.slice(start + 2, start + 22));
  if (!nameMatch || !NAMES.has(nameMatch[0])) return undefined;
  const name = nameMatch[0];
  let i = start + 2 + name.length;
  if (!/[:\s\]]/.test(text[i] ?? '')) return undefined;
  let value: string | undefined;
  if (text[i] === ':') {
    const end = name === 'reply' || name === 'reasoning' ? text.indexOf(']]', i) : wordEnd(text, i + 1);
    if (end < 0) throw new DirectiveError(`unterminated [[${name}:...`);
    value = text.slice(i + 1, end);
    i = end;
  }
  const params = new Map<string, string>();
  let json: string | undefined;
  for (;;) {
    const ws = i;
    while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n') i++;
    if (text.startsWith(']]', i)) return { name, value, params, json, source: text.slice(start, i + 2) };
    if (i === ws || i >= text.length) throw new DirectiveError(`malformed directive [[${name}...: expected "]]"`);
    if (text[i] === '{') {
      const end = jsonEnd(text, i);
      json = text.slice(i, end);
      i = end;
    } else {
      const end = wordEnd(text, i);
      const word = text.slice(i, end);
      const eq = word.indexOf('=');
      if (eq <= 0) throw new DirectiveError(`malformed parameter "${word}" in [[${name}]]`);
      params.set(word.slice(0, eq), word.slice(eq + 1));
      i = end;
    }
  }
}

function wordEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && !/[\s\]]/.test(text[i]!)) i++;
  return i;
}

/** Index just past the balanced JSON object starting at `from` (brackets must pair up). */
function jsonEnd(text: string, from: number): number {
  const closers: string[] = [];
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') closers.push('}');
    else if (c === '[') closers.push(']');
    else if (c === '}' || c === ']') {
      if (closers.pop() !== c)
        throw new DirectiveError(`unbalanced JSON object in directive at "${text.slice(from, i + 1)}"`);
      if (closers.length === 0) return i + 1;
    }
  }
  throw new DirectiveError('unterminated JSON object in directive');
}

function interpret(raw: RawDirective): Directive {
  const { name, value, params } = raw;
  const allow = (...keys: string[]) => {
    for (const key of params.keys()) {
      if (!keys.includes(key)) throw new DirectiveError(`unknown parameter "${key}" in [[${name}]]`);
    }
  };
  const need = (what: string): string => {
    if (!value) throw new DirectiveError(`[[${name}]] needs a value: [[${name}:${what}]]`);
    return value;
  };
  const num = (text: string | undefined, what: string, integer = true): number | undefined => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (text === '' || !Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) {
      throw new DirectiveError(
        `[[${name}]]: ${what} must be a non-negative ${integer ? 'integer' : 'number'}, got "${text}"`,
      );
    }
    return n;
  };
  allow(
    ...(name === 'error'
      ? ['retry-after', 'times', 'after', 'message']
      : name === 'stall' || name === 'disconnect'
        ? ['after']
        : name === 'truncate'
          ? ['after', 'times']
          : []),
  );
  if (raw.json !== undefined && name !== 'tool' && name !== 'loop') {
    throw new DirectiveError(`[[${name}]] takes no JSON arguments`);
  }
  switch (name) {
    case 'tool':
    case 'loop': {
      const args = raw.json ?? '{}';
      try {
        JSON.parse(args);
      } catch {
        throw new DirectiveError(`[[${name}:${need('NAME')}]]: arguments are not valid JSON`);
      }
      return { kind: name, name: need('NAME'), args };
    }
    case 'badjson':
      return { kind: 'badjson', name: need('NAME') };
    case 'error': {
      const status = num(need('STATUS'), 'status')!;
      if (status < 400 || status > 599) throw new DirectiveError(`[[error]]: status must be 400-599, got ${status}`);
      const d: Directive & { kind: 'error' } = { kind: 'error', status };
      const retryAfter = num(params.get('retry-after'), 'retry-after', false);
      const times = num(params.get('times'), 'times');
      const after = num(params.get('after'), 'after');
      const message = params.get('message');
      if (retryAfter !== undefined) d.retryAfterSec = retryAfter;
      if (times !== undefined) d.times = times;
      if (after !== undefined) d.afterTokens = after;
      if (message !== undefined) d.message = message.replace(/_/g, ' ');
      return d;
    }
    case 'stall': {
      const d: Directive & { kind: 'stall' } = { kind: 'stall', ms: num(need('MS'), 'MS')! };
      const after = num(params.get('after'), 'after');
      if (after !== undefined) d.afterTokens = after;
      return d;
    }
    case 'disconnect': {
      const after = num(params.get('after'), 'after');
      return after === undefined ? { kind: 'disconnect' } : { kind: 'disconnect', afterTokens: after };
    }
    case 'truncate': {
      const d: Directive & { kind: 'truncate' } = { kind: 'truncate' };
      const after = num(params.get('after'), 'after');
      const times = num(params.get('times'), 'times');
      if (after !== undefined) d.afterTokens = after;
      if (times !== undefined) d.times = times;
      if (value !== undefined) throw new DirectiveError('[[truncate]] takes no value');
      return d;
    }
    case 'len':
      return { kind: 'len', tokens: num(need('N'), 'N')! };
    case 'reply':
      return { kind: 'reply', text: need('TEXT') };
    case 'reasoning':
      return { kind: 'reasoning', text: need('TEXT') };
    case 'ttft':
      return { kind: 'ttft', ms: num(need('MS'), 'MS')! };
    case 'rate':
      return { kind: 'rate', tokensPerSec: num(need('TPS'), 'TPS', false)! };
    case 'window': {
      const tokens = num(need('N'), 'N')!;
      if (tokens < 1) throw new DirectiveError('[[window]]: N must be at least 1');
      return { kind: 'window', tokens };
    }
    case 'cost':
      return { kind: 'cost', amount: num(need('AMOUNT'), 'AMOUNT', false)! };
    case 'cached':
      return { kind: 'cached', tokens: num(need('N'), 'N')! };
    case 'argchunk': {
      const chars = num(need('CHARS'), 'CHARS')!;
      if (chars < 1) throw new DirectiveError('[[argchunk]]: CHARS must be at least 1');
      return { kind: 'argchunk', chars };
    }
    default:
      if (value !== undefined) throw new DirectiveError(`[[${name}]] takes no value`);
      return { kind: name === 'filter' ? 'filter' : name === 'html' ? 'html' : 'image' };
  }
}
