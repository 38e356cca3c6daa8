// @ts-check
// Renders one session's transcript from the fold's state (transcript.js): each item is one list
// entry, keyed; an entry is rebuilt only when its item changed, so a long transcript costs little
// per frame; a reply being streamed keeps its entry and re-renders its markdown there (markdown.js).
// The transcript keeps the newest message in view unless the reader scrolled up.
import { el } from './dom.js';
import { pretty, resultParts } from './results.js';
import { elicitationBox } from './elicitation-form.js';
import { showMarkdown } from './markdown.js';
import { answeredBy } from './transcript.js';
import { budgetEntry, isBudgetQuestion } from './budget-question.js';
import { appBox, showsApp, sweepApps, teardownApps } from './app-view.js';

/** @typedef {import('./transcript.js').Item} Item */
/** @typedef {import('./transcript.js').ToolItem} ToolItem */
/** @typedef {import('./transcript.js').CompactionItem} CompactionItem */
/** @typedef {import('./elicitation-form.js').Elicit} Elicit */
/** @typedef {import('./budget-question.js').Answer} Answer */
/** @typedef {import('./app-view.js').AppHost} AppHost */
/** @typedef {{ answer: Answer, elicit: Elicit, app: AppHost }} EntryActions */

/** A token count as the page shows it. @param {number} n */
export const tokens = (n) => n.toLocaleString('en');

const METHOD = { summary: 'summary', clearToolResults: 'cleared tool results' };

/**
 * A compaction: one line with its method, trigger and figures, folded open to the summary.
 * @param {CompactionItem} item
 */
function compactionEntry(item) {
  const line = `History compacted: ${METHOD[item.method]}, ${item.trigger} · ${tokens(item.tokensBefore)} → ${tokens(item.tokensAfter)} tokens`;
  const what = item.method === 'summary' ? 'summarised' : 'cleared of their tool results';
  const body = el('div', { className: 'body' });
  if (item.summary !== undefined) body.append(el('p', { className: 'summary-text', textContent: item.summary }));
  body.append(
    el('p', {
      className: 'meta',
      textContent: `Events up to #${item.upToSeq} are ${what} in the model's view; this transcript keeps them.${item.usage ? ` The summary took ${tokens(item.usage.totalTokens)} tokens.` : ''}`,
    }),
  );
  const details = el('details', {}, el('summary', { textContent: line }), body);
  details.addEventListener('toggle', () => details.open && body.scrollIntoView({ block: 'nearest' }));
  const li = el('li', { className: 'compaction' }, details);
  li.dataset.method = item.method;
  li.dataset.trigger = item.trigger;
  return li;
}

/**
 * @param {ToolItem} item
 * @param {EntryActions} actions
 */
function toolEntry(item, { answer, elicit, app }) {
  const li = el(
    'li',
    { className: 'tool' },
    el('strong', { textContent: item.toolName }),
    el('span', { textContent: ` on ${item.serverId}` }),
  );
  if (item.args !== undefined) li.append(el('pre', { className: 'args', textContent: pretty(item.args) }));
  const approval = item.approval;
  if (approval) {
    const box = el('div', { className: 'approval' });
    box.dataset.callId = item.callId;
    const v = approval.verdict;
    if (v) {
      const text = `${v.decision === 'approve' ? 'Approved' : 'Denied'} ${answeredBy(v)}${v.reason ? `: ${v.reason}` : ''}`;
      box.append(el('span', { className: v.decision === 'approve' ? 'approved' : 'failed', textContent: text }));
    } else {
      /** @param {string} label @param {'approve' | 'deny'} decision */
      const button = (label, decision) => {
        const b = el('button', { type: 'button', className: decision, textContent: label });
        b.addEventListener('click', () => answer(item.callId, decision));
        return b;
      };
      const until = approval.expiresAt ? ` (until ${new Date(approval.expiresAt).toLocaleTimeString()})` : '';
      box.append(
        el('span', { textContent: `Waiting for approval${until} ` }),
        button('Approve', 'approve'),
        button('Deny', 'deny'),
      );
    }
    li.append(box);
  }
  for (const e of item.elicitations ?? []) li.append(elicitationBox(e, elicit));
  const outcome = item.outcome;
  if (outcome) {
    li.append(
      el('span', {
        className: outcome.success ? '' : 'failed',
        textContent: outcome.success ? ` ✓ ${outcome.durationMs} ms` : ' ✗ failed',
      }),
      el('div', { className: outcome.success ? 'result' : 'result failed' }, ...resultParts(outcome.result)),
    );
    const marker = outcome.app;
    if (showsApp(marker)) {
      const { callId, toolName, args } = item;
      li.append(appBox({ callId, toolName, args, success: outcome.success, result: outcome.result, app: marker }, app));
    } else if (marker) li.append(el('p', { className: 'app-note', textContent: marker.note }));
  }
  return li;
}

/**
 * A user message, with what it attached: the prompt it sent and the resources (the `userMessage` frame names them).
 * @param {import('./transcript.js').UserItem} item
 */
function userEntry(item) {
  const li = el('li', { className: 'user', textContent: item.content + (item.hasImage ? '\n[image attached]' : '') });
  const notes = [
    ...(item.prompt ? [`prompt ${item.prompt.name} (${item.prompt.serverId})`] : []),
    ...(item.resources ?? []).map((r) => `resource ${r.uri} (${r.serverId})`),
  ];
  if (notes.length) li.append(el('small', { className: 'attached', textContent: `Attached: ${notes.join(', ')}` }));
  return li;
}

/**
 * The model's reply as markdown, rendered into `li` (the entry it had while streaming, or a new one).
 * @param {import('./transcript.js').AssistantItem} item
 * @param {HTMLElement} [li]
 */
function replyEntry(item, li = el('li')) {
  li.className = item.text ? 'assistant' : 'assistant pending';
  if (item.done) li.dataset.done = 'true';
  else delete li.dataset.done;
  if (item.text) showMarkdown(li, item.text, item.done);
  else li.textContent = '…';
  return li;
}

/**
 * @param {Item} item
 * @param {EntryActions} actions
 * @returns {HTMLElement}
 */
function entry(item, actions) {
  switch (item.kind) {
    case 'user':
      return userEntry(item);
    case 'assistant':
      return replyEntry(item);
    case 'tool':
      return isBudgetQuestion(item) ? budgetEntry(item, actions.answer) : toolEntry(item, actions);
    case 'error':
      return el('li', { className: 'error', textContent: `${item.code}: ${item.message}` });
    case 'reset':
      return el('li', { className: 'note', textContent: '— conversation reset —' });
    case 'compaction':
      return compactionEntry(item);
    case 'reasoning':
      return el(
        'li',
        { className: 'compaction reasoning' },
        el(
          'details',
          {},
          el('summary', { textContent: `Reasoning (${item.model})` }),
          el('p', { className: 'summary-text', textContent: item.text }),
        ),
      );
  }
}

/**
 * Puts `node` before `before` in `list`: an entry already there moves with its state (`moveBefore`, where the browser
 * has it), so an MCP App's frame among it is not loaded again.
 * @param {HTMLElement} list @param {HTMLElement} node @param {ChildNode | null} before
 */
function place(list, node, before) {
  const move = /** @type {{ moveBefore?: (node: Node, child: Node | null) => void }} */ (list).moveBefore;
  if (move && node.parentNode === list) {
    try {
      return move.call(list, node, before);
    } catch {
      // not movable with its state: inserted as any node is
    }
  }
  list.insertBefore(node, before);
}

/**
 * A call that waits for a person's approval shows when its entry comes, even when the reader scrolled up (to an app
 * whose tool call it is, say).
 * @param {HTMLElement} list  the transcript's `<ol>`, which scrolls
 * @param {EntryActions} actions  sends a person's answer to a call waiting for approval (`answer`; a budget question's
 *   may raise the limit), to a tool server's question (`elicit`), and an MCP App's message (`app`)
 */
export function createTranscript(list, actions) {
  /** @type {Map<string, { item: Item, node: HTMLElement }>} */
  let shown = new Map();
  /** @type {readonly Item[] | undefined} */
  let last;
  return {
    /**
     * Makes the list show `items` (the same array again costs nothing).
     * @param {readonly Item[]} items
     */
    render(items) {
      if (items === last) return;
      const fresh = last === undefined;
      last = items;
      const atEnd = fresh || list.scrollHeight - list.scrollTop - list.clientHeight < 40;
      /** @type {Map<string, { item: Item, node: HTMLElement }>} */
      const next = new Map();
      let before = /** @type {ChildNode | null} */ (list.firstChild);
      /** @type {HTMLElement | undefined} */
      let waiting;
      for (const item of items) {
        const old = shown.get(item.key);
        const node =
          old && old.item === item
            ? old.node
            : old?.item.kind === 'assistant' && item.kind === 'assistant'
              ? replyEntry(item, old.node)
              : entry(item, actions);
        if (!fresh && old?.node !== node && item.kind === 'tool' && item.approval && !item.approval.verdict)
          waiting = node;
        if (old && old.node !== node) {
          if (old.node === before) before = old.node.nextSibling;
          old.node.remove();
        }
        next.set(item.key, { item, node });
        if (node === before) before = node.nextSibling;
        else place(list, node, before);
      }
      for (const [key, { node }] of shown) if (!next.has(key)) node.remove();
      shown = next;
      sweepApps();
      if (atEnd) list.scrollTop = list.scrollHeight;
      else waiting?.scrollIntoView({ block: 'nearest' });
    },
    /** Forgets what is shown (another session is about to be rendered); its apps are told they go. */
    clear() {
      teardownApps();
      list.replaceChildren();
      shown = new Map();
      last = undefined;
    },
  };
}
