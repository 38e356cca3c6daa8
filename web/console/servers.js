// @ts-check
// The tool-server panel, rendered from the fold's `servers` (the REST list, then mcpServerStatus
// frames): live status, restart and disconnect, the tools of a server, and a form per tool built
// from its inputSchema. A server's entry is rebuilt only when its record changed, so an open
// form keeps what was typed into it.
import { call } from './api.js';
import { el } from './dom.js';
import { promptPicker } from './prompts.js';
import { resourceBrowser } from './resources.js';
import { resultParts } from './results.js';

/** @typedef {import('./transcript.js').ServerRecord} ServerRecord */
/** @typedef {{ type?: string, description?: string }} PropertySchema */
/** @typedef {{ name: string, description?: string, inputSchema?: { properties?: Record<string, PropertySchema>, required?: string[] } }} Tool */

/** @param {string[]} parts */
const path = (...parts) => parts.map(encodeURIComponent).join('/');

/**
 * Reads a form field of one schema property: numbers and booleans typed, objects and arrays as JSON.
 * @param {HTMLInputElement | HTMLTextAreaElement} input
 * @param {PropertySchema} schema
 * @returns {unknown}
 */
function readField(input, schema) {
  if (schema.type === 'boolean') return input instanceof HTMLInputElement && input.checked;
  const text = input.value;
  if (text === '') return undefined;
  if (schema.type === 'number' || schema.type === 'integer') return Number(text);
  if (schema.type === 'object' || schema.type === 'array') return /** @type {unknown} */ (JSON.parse(text));
  return text;
}

/** @param {string} serverId @param {Tool} tool */
function toolForm(serverId, tool) {
  const props = tool.inputSchema?.properties ?? {};
  const required = new Set(tool.inputSchema?.required ?? []);
  const output = el('output', { className: 'tool-output' });
  const inputs = Object.entries(props).map(([name, schema]) => {
    const id = `arg-${serverId}-${tool.name}-${name}`;
    /** @type {HTMLInputElement | HTMLTextAreaElement} */
    const input =
      schema.type === 'boolean'
        ? el('input', { type: 'checkbox', id })
        : schema.type === 'object' || schema.type === 'array'
          ? el('textarea', { id, name, required: required.has(name) })
          : el('input', { id, name, required: required.has(name) });
    if (input instanceof HTMLInputElement && (schema.type === 'number' || schema.type === 'integer'))
      input.type = 'number';
    const label = el('label', {
      htmlFor: id,
      textContent: `${name}${required.has(name) ? ' *' : ''}${schema.description ? ` — ${schema.description}` : ''}`,
    });
    return { name, schema, input, label };
  });
  const form = el(
    'form',
    { className: 'tool-form' },
    ...inputs.flatMap((f) => [f.label, f.input]),
    el('button', { type: 'submit', textContent: `Run ${tool.name}` }),
    output,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    output.textContent = 'running…';
    const run = async () => {
      /** @type {Record<string, unknown>} */
      const args = {};
      for (const f of inputs) {
        const value = readField(f.input, f.schema);
        if (value !== undefined) args[f.name] = value;
      }
      /** @type {{ data: unknown }} */
      const res = await call('POST', `/api/mcp/servers/${path(serverId)}/tools/${path(tool.name)}/execute`, args);
      output.replaceChildren(...resultParts(res.data));
    };
    run().catch((/** @type {any} */ err) => (output.textContent = `${err?.code ?? 'ERROR'}: ${err?.message}`));
  });
  return el(
    'details',
    {},
    el('summary', { textContent: tool.name }),
    el('p', { textContent: tool.description ?? '' }),
    form,
  );
}

/**
 * @param {HTMLElement} list  the panel's `<ul>`
 * @param {(text: string) => void} report  shows a failed action
 * @param {{ attach: (ref: import('./resources.js').ResourceRef) => void, sendPrompt: import('./prompts.js').SendPrompt }} composer
 *   attaches a resource to the next message; sends a prompt as the user's turn
 */
export function createServerPanel(list, report, composer) {
  /** @param {string} label @param {() => Promise<unknown>} run */
  const action = (label, run) => {
    const button = el('button', { type: 'button', textContent: label });
    button.addEventListener(
      'click',
      () => void run().catch((/** @type {Error} */ err) => report(`${label}: ${err.message}`)),
    );
    return button;
  };

  /**
   * The OAuth sign-in of a server waiting for one (its record carries the URL for admins only): the authorization
   * server's page, in a new tab; agentd's callback reconnects the server and the panel follows its status frame.
   * @param {ServerRecord} s
   */
  const signIn = (s) =>
    s.authorizationUrl && /^https?:\/\//.test(s.authorizationUrl)
      ? el('a', {
          className: 'sign-in',
          href: s.authorizationUrl,
          target: '_blank',
          rel: 'noopener noreferrer',
          textContent: 'Sign in',
        })
      : '';

  /**
   * The caller's own sign-in to a server each principal signs in to (`oauthPer: principal`): begins it and opens
   * the authorization server's page in a new tab; agentd's callback keeps the caller's tokens for its tool calls.
   * @param {ServerRecord} s
   */
  const ownSignIn = (s) => {
    if (s.oauthPer !== 'principal') return '';
    const button = el('button', { type: 'button', className: 'own-sign-in', textContent: 'Sign in as me' });
    button.addEventListener('click', () => {
      const run = async () => {
        /** @type {{ signedIn: boolean, authorizationUrl?: string }} */
        const res = await call('POST', `/api/mcp/servers/${path(s.id)}/sign-in`);
        if (res.authorizationUrl && /^https?:\/\//.test(res.authorizationUrl))
          window.open(res.authorizationUrl, '_blank', 'noopener,noreferrer');
        else if (res.signedIn) button.textContent = 'Signed in';
      };
      run().catch((/** @type {Error} */ err) => report(`Sign in as me: ${err.message}`));
    });
    return button;
  };

  /** @param {ServerRecord} s */
  const item = (s) => {
    const tools = el('details', { className: 'tools' }, el('summary', { textContent: 'Tools' }));
    tools.addEventListener('toggle', () => {
      if (!tools.open || tools.dataset.loaded) return;
      tools.dataset.loaded = 'true';
      call('GET', `/api/mcp/servers/${path(s.id)}/tools`).then(
        (/** @type {{ tools: Tool[] }} */ { tools: found }) => tools.append(...found.map((t) => toolForm(s.id, t))),
        (/** @type {Error} */ err) => tools.append(el('p', { className: 'error', textContent: err.message })),
      );
    });
    return el(
      'li',
      { className: 'server', id: `server-${s.id}` },
      el('strong', { textContent: s.name }),
      ' ',
      el('span', { className: `status status-${s.status}`, textContent: s.status }),
      s.error ? el('p', { className: 'error', textContent: s.error }) : '',
      el(
        'div',
        { className: 'row' },
        signIn(s),
        ownSignIn(s),
        action('Restart', () => call('POST', `/api/mcp/servers/${path(s.id)}/restart`)),
        action('Disconnect', () => call('DELETE', `/api/mcp/servers/${path(s.id)}`)),
      ),
      ...(s.status === 'connected'
        ? [tools, resourceBrowser(s.id, composer.attach), promptPicker(s.id, composer.sendPrompt)]
        : []),
    );
  };

  /** @type {Map<string, { record: ServerRecord, node: HTMLElement }>} */
  let shown = new Map();
  /** @type {Readonly<Record<string, ServerRecord>> | undefined} */
  let last;
  return {
    /** @param {Readonly<Record<string, ServerRecord>>} servers */
    render(servers) {
      if (servers === last) return; // the fold keeps the object while no server changed
      last = servers;
      /** @type {Map<string, { record: ServerRecord, node: HTMLElement }>} */
      const next = new Map();
      for (const record of Object.values(servers)) {
        const old = shown.get(record.id);
        if (old?.record === record) next.set(record.id, old);
        else {
          const node = item(record);
          if (old) old.node.replaceWith(node);
          else list.append(node);
          next.set(record.id, { record, node });
        }
      }
      for (const [id, { node }] of shown) if (!next.has(id)) node.remove();
      shown = next;
    },
  };
}
