// @ts-check
// The built-in inspector: reads /inspect/ws (Stately inspection frames) and shows the live actors,
// the selected one's statechart (from its machine definition) with the active states highlighted,
// the states it went through, its context, and the event log. Until a person picks an actor, the page
// shows the busy turn (the newest running one), else a session, else the first actor; the context leaves
// out what a machine is given rather than holds (its functions, e.g. a tool server's `now` and `random`).
import { live } from './live.js';
import { el } from './dom.js';
import { createServerPanel } from './servers.js';
import { actorToOpen, contextShown } from './view.js';

/** An actor's name as shown: an owned session's key (`turn:` NUL owner NUL id) reads `turn:owner/id`. */
const shownName = (/** @type {string} */ name) => {
  const [head = '', owner, id] = name.split('\u0000');
  return id === undefined ? name : `${head}${owner}/${id}`;
};

/**
 * A frame of /inspect/ws (Stately's inspection format), as far as this page reads it.
 * @typedef {{ type: string, sessionId: string, name?: string, parentId?: string, definition?: string, snapshot?: Snapshot, event?: { type?: string }, createdAt?: string | number }} InspectFrame
 * @typedef {{ value?: StateValue, status?: string, context?: unknown, input?: unknown }} Snapshot
 * @typedef {string | { [state: string]: StateValue }} StateValue
 * @typedef {{ type?: string, on?: Record<string, unknown>, states?: Record<string, StateNode> }} StateNode
 * @typedef {StateNode & { id?: string }} Definition
 * @typedef {{ name: string, parentId: string | undefined, definition: Definition | undefined, snapshot: Snapshot | undefined, path: string[], stopped: boolean }} Actor
 * @typedef {{ path: string, name: string, x: number, y: number, width: number, height: number, final?: boolean }} LayoutNode
 * @typedef {{ event: string, points: { x: number, y: number }[], label: { x: number, y: number } }} LayoutEdge
 * @typedef {{ width: number, height: number, nodes: LayoutNode[], edges: LayoutEdge[] }} Layout
 */

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const MAX_EVENTS = 200;
/** Finished child actors kept for looking back (the oldest go first). */
const MAX_STOPPED = 30;

/** By xstate session id; `path`: the state values seen. @type {Map<string, Actor>} */
const actors = new Map();
/** @type {string | undefined} */
let selected;
/** Whether a person picked the selected actor (else the page picks it: view.js `actorToOpen`). */
let picked = false;

/** @param {unknown} value */
const valueText = (value) => (typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value));
/**
 * Whether the state at `path` (e.g. ['error', 'backoff']) is active in a snapshot value.
 * @param {StateValue | undefined} value @param {string[]} path
 */
function isActive(value, path) {
  /** @type {StateValue | undefined} */
  let v = value;
  for (const key of path) {
    if (typeof v === 'string') return v === key && path.at(-1) === key;
    if (!v || !(key in v)) return false;
    v = v[key];
  }
  return true;
}

/** @param {string} name @param {StateNode} node @param {string[]} path @param {StateValue | undefined} value @returns {HTMLElement} */
function stateNode(name, node, path, value) {
  const box = el(
    'div',
    { className: `state${isActive(value, path) ? ' active' : ''}${node.type === 'final' ? ' final' : ''}` },
    el('div', { className: 'name', textContent: name }),
  );
  box.dataset.state = path.join('.');
  const on = Object.keys(node.on ?? {});
  if (on.length) box.append(el('div', { className: 'on', textContent: `on: ${on.join(', ')}` }));
  const children = Object.entries(node.states ?? {});
  if (children.length)
    box.append(
      el('div', { className: 'children' }, ...children.map(([n, child]) => stateNode(n, child, [...path, n], value))),
    );
  return box;
}

/** Statechart layouts by machine id, laid out at build time (machines/layouts.json, npm run layouts). */
/** @type {Record<string, Layout>} */
let layouts = {};
fetch('/inspect/layouts.json')
  .then((r) => r.json())
  .then(
    (/** @type {Record<string, Layout>} */ l) => ((layouts = l), renderSelected()),
    () => {},
  );

const SVG = 'http://www.w3.org/2000/svg';
/** @param {string} tag @param {Record<string, string | number>} attrs @param {string} [text] */
const svgEl = (tag, attrs, text) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
};

/** @param {Layout} layout @param {StateValue | undefined} value */
function svgChart(layout, value) {
  const svg = svgEl('svg', {
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    width: layout.width,
    height: layout.height,
    role: 'img',
  });
  const marker = svgEl('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 6,
    markerHeight: 6,
    orient: 'auto-start-reverse',
  });
  marker.append(svgEl('path', { d: 'M 0 0 L 10 5 L 0 10 z' }));
  const defs = svgEl('defs', {});
  defs.append(marker);
  svg.append(defs);
  for (const n of layout.nodes) {
    const g = svgEl('g', {
      class: `state${isActive(value, n.path.split('.')) ? ' active' : ''}${n.final ? ' final' : ''}`,
      'data-state': n.path,
    });
    g.append(
      svgEl('rect', { x: n.x, y: n.y, width: n.width, height: n.height, rx: 6 }),
      svgEl('text', { x: n.x + 8, y: n.y + 22 }, n.name),
    );
    svg.append(g);
  }
  for (const e of layout.edges) {
    if (e.points.length < 2) continue;
    svg.append(
      svgEl('polyline', {
        class: 'edge',
        points: e.points.map((p) => `${p.x},${p.y}`).join(' '),
        'marker-end': 'url(#arrow)',
      }),
    );
    svg.append(svgEl('text', { class: 'event', x: e.label.x, y: e.label.y + 10 }, e.event));
  }
  return svg;
}

function renderSelected() {
  const actor = selected === undefined ? undefined : actors.get(selected);
  if (!actor) return;
  $('actor-title').textContent = `${actor.name}${actor.stopped ? ' (stopped)' : ''}`;
  $('path').textContent = `states: ${actor.path.join(' → ')}`;
  const id = actor.definition?.id;
  const layout = id === undefined ? undefined : layouts[id];
  if (layout) {
    $('chart').replaceChildren(svgChart(layout, actor.snapshot?.value));
    return renderContext(actor);
  }
  const states = Object.entries(actor.definition?.states ?? {});
  $('chart').replaceChildren(
    ...(states.length
      ? states.map(([n, node]) => stateNode(n, node, [n], actor.snapshot?.value))
      : [el('p', { textContent: `status: ${actor.snapshot?.status ?? 'active'}` })]),
  );
  renderContext(actor);
}

/** @param {Actor} actor */
function renderContext(actor) {
  const { shown, hidden } = contextShown(actor.snapshot);
  $('context').textContent = JSON.stringify(shown, null, 2);
  $('context-hidden').textContent = hidden.length
    ? `Not shown (functions the machine is given): ${hidden.join(', ')}`
    : '';
}

function renderActors() {
  /** @param {string} id @returns {HTMLElement} */
  const item = (id) => {
    const a = /** @type {Actor} */ (actors.get(id));
    const button = el(
      'button',
      { type: 'button', className: a.stopped ? 'stopped' : '' },
      `${a.name} `,
      el('span', { className: 'value', textContent: valueText(a.snapshot?.value ?? a.snapshot?.status) }),
    );
    button.setAttribute('aria-current', String(id === selected));
    button.dataset.actor = a.name;
    button.addEventListener('click', () => {
      selected = id;
      picked = true;
      renderActors();
      renderSelected();
    });
    const kids = [...actors.keys()].filter((k) => actors.get(k)?.parentId === id);
    return el('li', {}, button, kids.length ? el('ul', {}, ...kids.map(item)) : '');
  };
  $('actors').replaceChildren(
    ...[...actors.keys()].filter((k) => !actors.has(actors.get(k)?.parentId ?? '')).map(item),
  );
}

/** @param {InspectFrame} frame */
function logEvent(frame) {
  const who = actors.get(frame.sessionId)?.name ?? frame.sessionId;
  $('events').prepend(
    el('li', { textContent: `${new Date(Number(frame.createdAt)).toLocaleTimeString()} ${who}: ${frame.event?.type}` }),
  );
  while ($('events').children.length > MAX_EVENTS) $('events').lastChild?.remove();
}

function prune() {
  const stopped = [...actors.keys()].filter((k) => actors.get(k)?.stopped && actors.get(k)?.parentId);
  for (const id of stopped.slice(0, Math.max(0, stopped.length - MAX_STOPPED))) if (id !== selected) actors.delete(id);
}

const servers = createServerPanel($('tool-servers'));

/**
 * The questions tool servers asked that wait for the user across the live turns (each turn's `questions`,
 * but the calls waiting for approval: the agent asks those, not a server), with the
 * session each turn belongs to (its parent's name, `turn:<session>`).
 * @returns {import('./servers.js').Waiting[]}
 */
function waitingQuestions() {
  return [...actors.values()].flatMap((a) => {
    const questions = /** @type {{ questions?: unknown } | undefined} */ (a.snapshot?.context)?.questions;
    if (a.stopped || !Array.isArray(questions)) return [];
    const session = (actors.get(a.parentId ?? '')?.name ?? '').replace(/^turn:/, '');
    return questions.filter((q) => q.kind !== 'approval').map((q) => ({ ...q, session }));
  });
}

/** @param {InspectFrame} frame */
function onFrame(frame) {
  // A tool server's connection actor (`mcp:<name>`) changed: its record (and capabilities) may have.
  if (frame.type !== '@xstate.event' && actors.get(frame.sessionId)?.name.startsWith('mcp:')) servers.refresh();
  switch (frame.type) {
    case 'resync':
      actors.clear();
      break;
    case '@xstate.actor': {
      /** @type {Definition | undefined} */
      let definition;
      try {
        definition =
          frame.definition === undefined ? undefined : /** @type {Definition} */ (JSON.parse(frame.definition));
      } catch {
        definition = undefined;
      }
      const known = actors.get(frame.sessionId);
      actors.set(frame.sessionId, {
        name: shownName(frame.name ?? frame.sessionId),
        parentId: frame.parentId,
        definition,
        snapshot: frame.snapshot,
        path: known?.path ?? [],
        stopped: false,
      });
      break;
    }
    case '@xstate.snapshot': {
      const actor = actors.get(frame.sessionId);
      if (!actor) break;
      actor.snapshot = frame.snapshot;
      const value = valueText(frame.snapshot?.value);
      if (value && actor.path.at(-1) !== value) actor.path.push(value);
      actor.stopped = frame.snapshot?.status === 'stopped' || frame.snapshot?.status === 'done';
      if (actor.stopped) prune();
      break;
    }
    case '@xstate.event':
      logEvent(frame);
      return;
  }
  const shown = selected;
  if (!picked) selected = actorToOpen(actors, selected);
  renderActors();
  servers.showWaiting(waitingQuestions());
  if (frame.sessionId === selected || frame.type === 'resync' || selected !== shown) renderSelected();
}

live({
  path: '/inspect/ws',
  onState(link) {
    // A new connection starts with the late-join state of every live actor.
    if (link === 'open') {
      actors.clear();
      servers.refresh();
      $('status').textContent = 'live';
    }
    if (link === 'closed')
      $('status').textContent =
        'disconnected; reconnecting… (the inspector needs --inspect, and the API key if one is set: enter it in the console)';
  },
  onMessage: (frame) => onFrame(/** @type {InspectFrame} */ (frame)),
});
