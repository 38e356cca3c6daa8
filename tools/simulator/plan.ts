/**
 * Decides what the simulated model answers to one request, from the directives in the last user
 * message (see directives.ts) and the shape of the conversation. Pure except for `failures`,
 * the per-conversation count of errors served for `[[error:... times=N]]`.
 */
import { parseDirectives, type Directive } from './directives.ts';
import type { ChatRequestBody, Reply, ScriptedToolCall, WireContentPart, WireMessage } from './types.ts';

/** Argument text of `[[badjson:NAME]]`: deterministic and never valid JSON. */
export const MALFORMED_ARGUMENTS = '{"broken": tru';

/** Text of a message's content: the string, or its text parts joined. */
export function textOf(content: WireMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (part.type === 'text' && typeof part.text === 'string') text += part.text;
  return text;
}

function lastIndexOfRole(messages: WireMessage[], role: string): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === role) return i;
  return -1;
}

/**
 * The reply for `body`. Order of precedence: an `error` directive (until its `times` are used up),
 * then tool results (when the last message is a tool result and no `loop` is asked: the `reply` text
 * when given, else what each tool returned), then tool-call
 * directives, then `reply`, `image`, `len`, the global `replyTokens`, and finally the echo
 * `You said: <text without directives>`. Timing directives apply to whichever reply is chosen.
 * Throws DirectiveError for a malformed directive.
 */
export function planReply(body: ChatRequestBody, failures: Map<string, number>, replyTokens?: number): Reply {
  const messages = body.messages;
  const userIndex = lastIndexOfRole(messages, 'user');
  const userMessage = messages[userIndex];
  const last = userMessage ? textOf(userMessage.content) : '';
  if (last.includes(TRANSCRIPT_OPEN)) return { text: summarise(last) };
  const { directives, rest } = parseDirectives(userMessage ? textOf(userMessage.content) : '');
  const reply: Reply = {};
  const calls: ScriptedToolCall[] = [];
  let loop = false;
  let error: (Directive & { kind: 'error' }) | undefined;
  let truncate: (Directive & { kind: 'truncate' }) | undefined;
  let text: string | undefined;
  let tokens: number | undefined;
  let image = false;
  let filter = false;
  for (const d of directives) {
    switch (d.kind) {
      case 'tool':
        calls.push({ name: d.name, arguments: d.args });
        break;
      case 'loop':
        loop = true;
        calls.push({ name: d.name, arguments: d.args });
        break;
      case 'badjson':
        calls.push({ name: d.name, arguments: MALFORMED_ARGUMENTS });
        break;
      case 'error':
        error = d;
        break;
      case 'stall':
        reply.stall = d.afterTokens === undefined ? { ms: d.ms } : { ms: d.ms, afterTokens: d.afterTokens };
        break;
      case 'disconnect':
        reply.disconnect = d.afterTokens === undefined ? {} : { afterTokens: d.afterTokens };
        break;
      case 'truncate':
        truncate = d;
        break;
      case 'html':
        reply.html = true;
        break;
      case 'len':
        tokens = d.tokens;
        break;
      case 'reply':
        text = d.text;
        break;
      case 'reasoning':
        reply.reasoning = d.text;
        break;
      case 'ttft':
        reply.ttftMs = d.ms;
        break;
      case 'rate':
        reply.tokensPerSec = d.tokensPerSec;
        break;
      case 'argchunk':
        reply.toolArgChunkChars = d.chars;
        break;
      case 'image':
        image = true;
        break;
      case 'filter':
        filter = true;
        break;
      case 'window':
        break;
      case 'cost':
        reply.cost = d.amount;
        break;
      case 'cached':
        reply.cachedTokens = d.tokens;
        break;
    }
  }
  if (truncate && shouldFail(truncate, body, userIndex, failures, 'truncate'))
    reply.truncate = truncate.afterTokens === undefined ? {} : { afterTokens: truncate.afterTokens };
  if (error && shouldFail(error, body, userIndex, failures, 'error')) {
    reply.error = { status: error.status };
    if (error.message !== undefined) reply.error.message = error.message;
    if (error.retryAfterSec !== undefined) reply.error.retryAfterSec = error.retryAfterSec;
    if (error.afterTokens !== undefined) reply.error.afterTokens = error.afterTokens;
    if (error.afterTokens === undefined) return reply;
  }
  if (filter) return { ...reply, text: '', finishReason: 'content_filter' };
  if (messages[messages.length - 1]?.role === 'tool' && !loop) reply.text = text ?? toolResultsText(messages);
  else if (calls.length > 0) reply.toolCalls = calls;
  else if (text !== undefined) reply.text = text;
  else if (image) reply.text = describeImages(userMessage?.content);
  else if (tokens !== undefined) reply.tokens = tokens;
  else if (replyTokens !== undefined) reply.tokens = replyTokens;
  else reply.text = rest ? `You said: ${rest}` : 'You said nothing.';
  return reply;
}

/** Counts failures of one `kind` per conversation: the model name plus the history up to the last user message. */
function shouldFail(
  error: { times?: number },
  body: ChatRequestBody,
  userIndex: number,
  failures: Map<string, number>,
  kind: string,
): boolean {
  if (error.times === undefined) return true;
  const key = kind + '\n' + body.model + '\n' + JSON.stringify(body.messages.slice(0, userIndex + 1));
  const served = failures.get(key) ?? 0;
  if (served >= error.times) return false;
  failures.set(key, served + 1);
  return true;
}

/** `Tool NAME returned: CONTENT` for each tool result after the last assistant message. */
export function toolResultsText(messages: WireMessage[]): string {
  const assistant = messages[lastIndexOfRole(messages, 'assistant')];
  const names = new Map<string, string>();
  for (const call of assistant?.tool_calls ?? []) names.set(call.id, call.function.name);
  const lines: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i--) {
    const m = messages[i]!;
    lines.push(`Tool ${names.get(m.tool_call_id ?? '') ?? m.tool_call_id ?? 'unknown'} returned: ${textOf(m.content)}`);
  }
  return lines.reverse().join('\n');
}

/** States whether the content had image parts, with each one's media type and decoded size. */
export function describeImages(content: WireMessage['content']): string {
  const images = Array.isArray(content) ? content.filter((p: WireContentPart) => p.type === 'image_url') : [];
  if (images.length === 0) return 'The last user message had no image.';
  const described = images.map((part) => {
    const url = part.image_url?.url ?? '';
    const match = /^data:([^;,]+)(;base64)?,/.exec(url);
    if (!match) return `a linked image (${url.slice(0, 80)})`;
    const data = url.slice(match[0].length);
    const bytes = match[2]
      ? Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0)
      : data.length;
    return `an image (${match[1]}, ${bytes} bytes)`;
  });
  return `The last user message had ${described.join(' and ')}.`;
}

/** Opens the transcript of a summary request (agentd's compaction, src/agent/compaction/compaction.ts). */
export const TRANSCRIPT_OPEN = '<conversation>';

/**
 * The simulated model's summary of a transcript: how many user messages it held, the first and the
 * last of them (shortened), and every `[[window:N]]` directive it carried, so a conversation keeps
 * its window after it is compacted. Deterministic and short.
 */
export function summarise(text: string): string {
  const close = text.lastIndexOf('</conversation>');
  const body = text.slice(text.indexOf(TRANSCRIPT_OPEN) + TRANSCRIPT_OPEN.length, close < 0 ? text.length : close);
  const users = body
    .split('\n')
    .filter((l) => l.startsWith('User: '))
    .map((l) => l.slice(6));
  const earlier = /(?:^|\n)Earlier summary: (.*)/.exec(body)?.[1];
  const short = (t: string) => (t.length > 60 ? `${t.slice(0, 60)}…` : t);
  const windows = [...new Set(body.match(/\[\[window:\d+\]\]/g) ?? [])];
  const parts = [`Summary of ${users.length} user messages.`];
  if (earlier) parts.push(`Before them: ${short(earlier)}`);
  if (users[0] !== undefined) parts.push(`First: ${short(users[0])}`);
  if (users.length > 1) parts.push(`Last: ${short(users.at(-1) as string)}`);
  return [...parts, ...windows].join(' ');
}

/** The context window a `[[window:N]]` in any user or system message of the request sets (the last one found). */
export function windowOf(messages: WireMessage[]): number | undefined {
  let found: number | undefined;
  for (const m of messages) {
    if (m.role !== 'user' && m.role !== 'system') continue;
    const text = textOf(m.content);
    if (!text.includes('[[window:')) continue;
    for (const match of text.matchAll(/\[\[window:(\d+)\]\]/g)) found = Number(match[1]);
  }
  return found;
}
