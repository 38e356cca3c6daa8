// The tool-server panel: live status (from mcpServerStatus events), restart and disconnect, the
// tools of a server, and a form per tool built from its inputSchema.
import { call } from './api.js';

const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};
const path = (...parts) => parts.map(encodeURIComponent).join('/');

/** Reads a form field of one schema property: numbers and booleans typed, objects and arrays as JSON. */
function readField(input, schema) {
  const text = input.type === 'checkbox' ? input.checked : input.value;
  if (schema.type === 'boolean') return text;
  if (text === '') return undefined;
  if (schema.type === 'number' || schema.type === 'integer') return Number(text);
  if (schema.type === 'object' || schema.type === 'array') return JSON.parse(text);
  return text;
}

function toolForm(serverId, tool) {
  const props = tool.inputSchema?.properties ?? {};
  const required = new Set(tool.inputSchema?.required ?? []);
  const output = el('output', { className: 'tool-output' });
  const inputs = Object.entries(props).map(([name, schema]) => {
    const id = `arg-${serverId}-${tool.name}-${name}`;
    const input = schema.type === 'boolean' ? el('input', { type: 'checkbox', id }) : el(schema.type === 'object' || schema.type === 'array' ? 'textarea' : 'input', { id, name, required: required.has(name) });
    if (schema.type === 'number' || schema.type === 'integer') input.type = 'number';
    return { name, schema, input, label: el('label', { htmlFor: id, textContent: `${name}${required.has(name) ? ' *' : ''}${schema.description ? ` — ${schema.description}` : ''}` }) };
  });
  const form = el('form', { className: 'tool-form' }, ...inputs.flatMap((f) => [f.label, f.input]), el('button', { type: 'submit', textContent: `Run ${tool.name}` }), output);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    output.textContent = 'running…';
    try {
      const args = {};
      for (const f of inputs) {
        const value = readField(f.input, f.schema);
        if (value !== undefined) args[f.name] = value;
      }
      const res = await call('POST', `/api/mcp/servers/${path(serverId)}/tools/${path(tool.name)}/execute`, args);
      output.textContent = JSON.stringify(res.data, null, 2);
    } catch (err) {
      output.textContent = `${err.code ?? 'ERROR'}: ${err.message}`;
    }
  });
  return el('details', {}, el('summary', { textContent: tool.name }), el('p', { textContent: tool.description ?? '' }), form);
}

export function createServerPanel(list, report) {
  const action = (label, run) => {
    const button = el('button', { type: 'button', textContent: label });
    button.addEventListener('click', () => run().catch((err) => report(`${label}: ${err.message}`)));
    return button;
  };

  const item = (s) => {
    const tools = el('details', { className: 'tools' }, el('summary', { textContent: 'Tools' }));
    tools.addEventListener('toggle', async () => {
      if (!tools.open || tools.dataset.loaded) return;
      tools.dataset.loaded = 'true';
      try {
        const { tools: found } = await call('GET', `/api/mcp/servers/${path(s.id)}/tools`);
        tools.append(...found.map((t) => toolForm(s.id, t)));
      } catch (err) {
        tools.append(el('p', { className: 'error', textContent: err.message }));
      }
    });
    return el(
      'li',
      { className: 'server', id: `server-${s.id}` },
      el('strong', { textContent: s.name }),
      ' ',
      el('span', { className: `status status-${s.status}`, textContent: s.status }),
      s.error ? el('p', { className: 'error', textContent: s.error }) : '',
      el('div', { className: 'row' },
        action('Restart', () => call('POST', `/api/mcp/servers/${path(s.id)}/restart`)),
        action('Disconnect', () => call('DELETE', `/api/mcp/servers/${path(s.id)}`))),
      s.status === 'connected' ? tools : '',
    );
  };

  return {
    async load() {
      const { servers: all } = await call('GET', '/api/mcp/servers');
      list.replaceChildren(...all.map(item));
    },
    /** An mcpServerStatus event. */
    update(server) {
      const old = list.querySelector(`#${CSS.escape(`server-${server.id}`)}`);
      if (server.status === 'disconnected') old?.remove();
      else if (old) old.replaceWith(item(server));
      else list.append(item(server));
    },
  };
}
