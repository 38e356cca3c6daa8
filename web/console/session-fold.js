// @ts-check
// One session's transcript as a pure fold (transcript.js holds the console's whole state and the
// rules both follow): durable frames applied once by `seq`, items kept in `seq` order, a streamed
// reply completed by its `response`.

/**
 * @typedef {import('./transcript.js').ConsoleFrame} ConsoleFrame
 * @typedef {import('./transcript.js').SessionView} SessionView
 * @typedef {import('./transcript.js').Item} Item
 * @typedef {import('./transcript.js').ToolItem} ToolItem
 * @typedef {import('./transcript.js').Verdict} Verdict
 * @typedef {import('./transcript.js').Elicitation} Elicitation
 * @typedef {import('./transcript.js').CompactionItem} CompactionItem
 */

const TRANSIENT = new Set(['thinking', 'chunk', 'replySoFar', 'error']);

/** Index of `value` in ascending `list`, or where it would go (binary search). @param {readonly number[]} list @param {number} value */
function position(list, value) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (/** @type {number} */ (list[mid]) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** @param {readonly Item[]} items @param {string} key */
const find = (items, key) => {
  for (let i = items.length - 1; i >= 0; i--) if (items[i]?.key === key) return i;
  return -1;
};

/** Inserts after every item ordered at or before it (the newest usually go last). @param {readonly Item[]} items @param {Item} item */
function insert(items, item) {
  let i = items.length;
  while (i > 0 && /** @type {Item} */ (items[i - 1]).order > item.order) i--;
  return items.toSpliced(i, 0, item);
}

/**
 * Puts `item` in place of the one with its key (moved when its order changed), or inserts it.
 * @param {readonly Item[]} items @param {Item} item
 */
function put(items, item) {
  const i = find(items, item.key);
  if (i < 0) return insert(items, item);
  if (items[i]?.order === item.order) return items.with(i, item);
  return insert(items.toSpliced(i, 1), item);
}

/**
 * The item with `key` if it is of `kind`.
 * @template {Item['kind']} K
 * @param {readonly Item[]} items @param {string} key @param {K} kind
 * @returns {Extract<Item, { kind: K }> | undefined}
 */
function get(items, key, kind) {
  const item = items[find(items, key)];
  return item?.kind === kind ? /** @type {Extract<Item, { kind: K }>} */ (item) : undefined;
}

/** @param {string} callId */
const callKey = (callId) => `call:${callId}`;
/** @param {string} turnId */
const replyKey = (turnId) => `reply:${turnId}`;

/**
 * A call's item, made from what a later frame knows when its `toolCall` was not seen.
 * @param {readonly Item[]} items
 * @param {{ callId: string, toolName?: string, serverId?: string, seq: number }} d
 * @returns {ToolItem}
 */
const callItem = (items, d) =>
  get(items, callKey(d.callId), 'tool') ?? {
    kind: 'tool',
    key: callKey(d.callId),
    order: d.seq,
    callId: d.callId,
    toolName: d.toolName ?? '',
    serverId: d.serverId ?? '',
    args: undefined,
  };

/**
 * One session's fold.
 * @param {SessionView} view
 * @param {Exclude<ConsoleFrame, { event: 'mcpServerStatus' | 'serverList' | 'sessionList' | 'toolsChanged' | 'pong' | 'hello' }>} frame
 * @returns {SessionView}
 */
export function foldSession(view, frame) {
  const seq = frame.data.seq;
  let { items, seen, lastSeq, loose } = view;
  if (!TRANSIENT.has(frame.event) && seq !== undefined) {
    const at = position(seen, seq);
    if (seen[at] === seq) return view;
    seen = seen.toSpliced(at, 0, seq);
    lastSeq = Math.max(lastSeq, seq);
  }
  switch (frame.event) {
    case 'userMessage': {
      const d = frame.data;
      items = put(items, {
        kind: 'user',
        key: `user:${d.seq}`,
        order: d.seq,
        content: d.content,
        hasImage: d.hasImage,
        ...(d.resources && { resources: d.resources }),
        ...(d.prompt && { prompt: d.prompt }),
      });
      break;
    }
    case 'thinking': {
      const d = frame.data;
      if (get(items, replyKey(d.turnId), 'assistant')) return view;
      items = put(items, {
        kind: 'assistant',
        key: replyKey(d.turnId),
        order: d.seq + 0.5,
        turnId: d.turnId,
        text: '',
        done: false,
      });
      break;
    }
    case 'chunk': {
      const d = frame.data;
      const old = get(items, replyKey(d.turnId), 'assistant');
      if (old?.done) return view;
      items = put(items, {
        kind: 'assistant',
        key: replyKey(d.turnId),
        order: d.seq + 0.5,
        turnId: d.turnId,
        text: (old?.text ?? '') + d.content,
        done: false,
      });
      break;
    }
    case 'replySoFar':
    case 'stepRestarted': {
      // The reply so far replaces what streamed before: the page subscribed mid-reply (a reload, a reconnect:
      // `replySoFar`), or the turn was taken up again after a restart (`stepRestarted`).
      const d = frame.data;
      if (get(items, replyKey(d.turnId), 'assistant')?.done) return view;
      items = put(items, {
        kind: 'assistant',
        key: replyKey(d.turnId),
        order: d.seq + 0.5,
        turnId: d.turnId,
        text: d.content,
        done: false,
      });
      break;
    }
    case 'response': {
      const d = frame.data;
      items = put(items, {
        kind: 'assistant',
        key: replyKey(d.turnId),
        order: d.seq,
        turnId: d.turnId,
        text: d.content,
        done: true,
      });
      break;
    }
    case 'toolCall': {
      const d = frame.data;
      const { approval, outcome } = get(items, callKey(d.callId), 'tool') ?? {};
      /** @type {ToolItem} */
      const item = {
        kind: 'tool',
        key: callKey(d.callId),
        order: d.seq,
        callId: d.callId,
        toolName: d.toolName,
        serverId: d.serverId,
        args: d.args,
      };
      const { elicitations } = get(items, callKey(d.callId), 'tool') ?? {};
      if (approval) item.approval = approval;
      if (elicitations) item.elicitations = elicitations;
      if (outcome) item.outcome = outcome;
      items = put(items, item);
      break;
    }
    case 'toolApprovalRequested': {
      const d = frame.data;
      const call = callItem(items, d);
      items = put(items, {
        ...call,
        args: call.args ?? d.args,
        approval: {
          expiresAt: d.expiresAt,
          ...(d.message !== undefined && { message: d.message }),
          ...(call.approval?.verdict && { verdict: call.approval.verdict }),
        },
      });
      break;
    }
    case 'toolApprovalResolved': {
      const d = frame.data;
      const call = callItem(items, d);
      /** @type {Verdict} */
      const verdict = { decision: d.decision, by: d.by };
      if (d.principal !== undefined) verdict.principal = d.principal;
      if (d.reason !== undefined) verdict.reason = d.reason;
      if (d.raiseTo !== undefined) verdict.raiseTo = d.raiseTo;
      items = put(items, { ...call, approval: { expiresAt: call.approval?.expiresAt ?? '', verdict } });
      break;
    }
    case 'elicitationRequested': {
      const d = frame.data;
      const call = callItem(items, d);
      if (call.elicitations?.some((e) => e.id === d.id)) return view;
      /** @type {Elicitation} */
      const asked = { id: d.id, message: d.message, mode: d.mode, expiresAt: d.expiresAt };
      if (d.requestedSchema) asked.requestedSchema = d.requestedSchema;
      if (d.url !== undefined) asked.url = d.url;
      items = put(items, { ...call, elicitations: [...(call.elicitations ?? []), asked] });
      break;
    }
    case 'elicitationResolved': {
      const d = frame.data;
      const call = items.find((i) => i.kind === 'tool' && i.elicitations?.some((e) => e.id === d.id));
      if (call?.kind !== 'tool') return view;
      const elicitations = (call.elicitations ?? []).map((e) =>
        e.id === d.id
          ? { ...e, answer: { action: d.action, by: d.by, ...(d.principal && { principal: d.principal }) } }
          : e,
      );
      items = put(items, { ...call, elicitations });
      break;
    }
    case 'toolResult': {
      const d = frame.data;
      const call = callItem(items, d);
      items = put(items, {
        ...call,
        toolName: call.toolName || d.toolName,
        serverId: call.serverId || d.serverId,
        outcome: { success: d.success, result: d.result, durationMs: d.durationMs, ...(d.app && { app: d.app }) },
      });
      break;
    }
    case 'reasoning': {
      const d = frame.data;
      items = put(items, { kind: 'reasoning', key: `reasoning:${d.seq}`, order: d.seq, text: d.text, model: d.model });
      break;
    }
    case 'conversationReset':
      items = put(items, { kind: 'reset', key: `reset:${frame.data.seq}`, order: frame.data.seq });
      break;
    case 'contextCompacted': {
      // A note at its place in the transcript; every original message stays shown (the log keeps them too).
      const d = frame.data;
      /** @type {CompactionItem} */
      const item = {
        kind: 'compaction',
        key: `compaction:${d.seq}`,
        order: d.seq,
        method: d.method,
        trigger: d.trigger,
        upToSeq: d.upToSeq,
        tokensBefore: d.tokensBefore,
        tokensAfter: d.tokensAfter,
      };
      if (d.summary !== undefined) item.summary = d.summary;
      if (d.usage) item.usage = d.usage;
      items = put(items, item);
      break;
    }
    case 'error': {
      const d = frame.data;
      const key = d.seq === undefined ? `error:#${loose++}` : `error:${d.turnId ?? ''}:${d.seq}:${d.code}:${d.message}`;
      if (find(items, key) >= 0) return view;
      // One without `seq` goes last.
      items = put(items, {
        kind: 'error',
        key,
        order: d.seq ?? items.at(-1)?.order ?? 0,
        code: d.code,
        message: d.message,
      });
      // A turn that failed before any of its reply came shows no empty reply.
      const reply = d.turnId === undefined ? undefined : get(items, replyKey(d.turnId), 'assistant');
      if (reply && !reply.text) items = items.toSpliced(find(items, reply.key), 1);
      break;
    }
  }
  return { lastSeq, seen, items, loose };
}
