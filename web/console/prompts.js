// @ts-check
// A tool server's prompts in the console: listed when the section is opened, each a form of its
// arguments (required ones marked) and an optional extra text, sent as the user's turn.
//
// Contracts:
// - The form is checked by the server, not the browser: "Send" first gets the prompt
//   (POST …/prompts/{name}/get), so a missing required argument shows the server's 400 message and
//   nothing is sent; then `send` hands `{ prompt: { serverId, name, arguments }, content }` to the
//   composer, which sends it as the message frame's `prompt` (with the attached resources).
// - Empty fields are left out of `arguments`.
import { call } from './api.js';
import { el } from './dom.js';
import { lazySection } from './lazy.js';

/** @typedef {{ name: string, description?: string, arguments: { name: string, description?: string, required: boolean }[] }} Prompt */
/** @typedef {{ serverId: string, name: string, arguments: Record<string, string> }} PromptRef */
/** @typedef {(turn: { prompt: PromptRef, content: string }) => boolean} SendPrompt  false when it could not be sent */

/** @param {string} s */
const enc = (s) => encodeURIComponent(s);

/**
 * @param {string} serverId
 * @param {Prompt} prompt
 * @param {SendPrompt} send
 */
function promptForm(serverId, prompt, send) {
  const output = el('output', { className: 'prompt-output' });
  const fields = prompt.arguments.map((a) => {
    const id = `prompt-${serverId}-${prompt.name}-${a.name}`;
    const input = el('input', { id, name: a.name });
    if (a.required) input.setAttribute('aria-required', 'true');
    const label = el('label', {
      htmlFor: id,
      textContent: `${a.name}${a.required ? ' *' : ''}${a.description ? ` — ${a.description}` : ''}`,
    });
    return { name: a.name, input, label };
  });
  const extraId = `prompt-${serverId}-${prompt.name}--extra`;
  const extra = el('textarea', { id: extraId, rows: 2 });
  const form = el(
    'form',
    { className: 'prompt-form', noValidate: true },
    ...fields.flatMap((f) => [f.label, f.input]),
    el('label', { htmlFor: extraId, textContent: 'Extra text (optional)' }),
    extra,
    el('button', { type: 'submit', textContent: `Send ${prompt.name}` }),
    output,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    /** @type {Record<string, string>} */
    const args = {};
    for (const f of fields) if (f.input.value !== '') args[f.name] = f.input.value;
    output.textContent = 'getting the prompt…';
    call('POST', `/api/mcp/servers/${enc(serverId)}/prompts/${enc(prompt.name)}/get`, args).then(
      () => {
        if (!send({ prompt: { serverId, name: prompt.name, arguments: args }, content: extra.value.trim() })) {
          output.textContent = 'not connected; try again in a moment';
          return;
        }
        output.textContent = 'sent';
        extra.value = '';
      },
      (/** @type {any} */ err) => (output.textContent = `${err?.code ?? 'ERROR'}: ${err?.message}`),
    );
  });
  return el(
    'details',
    { className: 'prompt' },
    el('summary', { textContent: prompt.name }),
    prompt.description ? el('p', { textContent: prompt.description }) : '',
    form,
  );
}

/**
 * A server's prompts, loaded when opened.
 * @param {string} serverId
 * @param {SendPrompt} send
 */
export function promptPicker(serverId, send) {
  return lazySection(
    'prompts',
    'Prompts',
    `/api/mcp/servers/${enc(serverId)}/prompts`,
    (/** @type {{ prompts: Prompt[] }} */ res) =>
      res.prompts.length
        ? res.prompts.map((p) => promptForm(serverId, p, send))
        : [el('p', { textContent: 'No prompts.' })],
  );
}
