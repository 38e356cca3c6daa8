// The transcript of one session: user messages, the reply as it streams, tool calls with their
// results and approvals. Live events and replayed history (no chunks, only the durable events)
// render alike.
const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};
const pretty = (value) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/**
 * `answer(callId, decision)` sends a person's answer to a call waiting for approval; the buttons
 * stay until the service reports the call resolved (so a refused answer leaves them usable).
 */
export function createTranscript(list, { answer }) {
  /** Per turn: the reply bubble being streamed into (reset by a tool call) and whether any chunk came. */
  const turns = new Map();
  const calls = new Map();
  const turn = (id) => turns.get(id) ?? turns.set(id, { bubble: undefined, streamed: false }).get(id);
  const add = (node) => {
    list.append(node);
    node.scrollIntoView({ block: 'end' });
    return node;
  };
  const reply = (t, text) => {
    t.bubble ??= add(el('li', 'assistant'));
    t.bubble.textContent += text;
  };

  return {
    clear() {
      list.replaceChildren();
      turns.clear();
      calls.clear();
    },
    /** Renders one event of the shown session. */
    show(event, data) {
      switch (event) {
        case 'userMessage':
          add(el('li', 'user', data.content + (data.hasImage ? '\n[image attached]' : '')));
          break;
        case 'thinking':
          turn(data.turnId);
          break;
        case 'chunk': {
          const t = turn(data.turnId);
          t.streamed = true;
          reply(t, data.content);
          break;
        }
        case 'toolCall': {
          turn(data.turnId).bubble = undefined;
          const item = add(el('li', 'tool'));
          item.append(el('strong', '', `${data.toolName}`), el('span', '', ` on ${data.serverId}`), el('pre', 'args', pretty(data.args)));
          calls.set(data.callId, item);
          break;
        }
        case 'toolApprovalRequested': {
          const item = calls.get(data.callId) ?? add(el('li', 'tool', data.toolName));
          const box = el('div', 'approval');
          box.dataset.callId = data.callId;
          const button = (label, decision) => {
            const b = el('button', decision, label);
            b.type = 'button';
            b.addEventListener('click', () => answer(data.callId, decision));
            return b;
          };
          const expires = new Date(data.expiresAt).toLocaleTimeString();
          box.append(el('span', '', `Waiting for approval (until ${expires}) `), button('Approve', 'approve'), button('Deny', 'deny'));
          item.append(box);
          break;
        }
        case 'toolApprovalResolved': {
          const box = calls.get(data.callId)?.querySelector('.approval');
          const verdict = `${data.decision === 'approve' ? 'Approved' : 'Denied'} (${data.by})${data.reason ? `: ${data.reason}` : ''}`;
          box?.replaceChildren(el('span', data.decision === 'approve' ? 'approved' : 'failed', verdict));
          break;
        }
        case 'toolResult': {
          const item = calls.get(data.callId) ?? add(el('li', 'tool', data.toolName));
          const result = el('pre', data.success ? 'result' : 'result failed', pretty(data.result?.content ?? data.result));
          item.append(el('span', data.success ? '' : 'failed', data.success ? ` ✓ ${data.durationMs} ms` : ' ✗ failed'), result);
          break;
        }
        case 'response': {
          const t = turn(data.turnId);
          if (!t.streamed) reply(t, data.content);
          t.bubble?.setAttribute('data-done', 'true');
          break;
        }
        case 'error':
          add(el('li', 'error', `${data.code}: ${data.message}`));
          break;
        case 'conversationReset':
          add(el('li', 'note', '— conversation reset —'));
          break;
      }
    },
  };
}
