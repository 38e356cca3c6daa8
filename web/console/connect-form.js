// @ts-check
// The form that connects a tool server at run time (`POST /api/connect-server`): stdio (a command and its arguments,
// one a line) or http (a URL). The server's answer, or the refusal, shows beside it.
import { call } from './api.js';

/**
 * @param {{
 *   form: HTMLFormElement,
 *   name: HTMLInputElement,
 *   type: HTMLSelectElement,
 *   target: HTMLInputElement,
 *   args: HTMLTextAreaElement,
 *   result: HTMLElement,
 * }} elements
 */
export function bindConnectForm({ form, name, type: typeField, target, args, result }) {
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const type = typeField.value;
    const where = target.value.trim();
    const argv = args.value
      .split('\n')
      .map((a) => a.trim())
      .filter(Boolean);
    const config = type === 'stdio' ? { type, command: where, args: argv } : { type, baseUrl: where };
    result.textContent = 'connecting…';
    call('POST', '/api/connect-server', { name: name.value.trim(), config }).then(
      (/** @type {{ name: string, status: string }} */ res) => (result.textContent = `${res.name}: ${res.status}`),
      (/** @type {any} */ err) => (result.textContent = `${err?.code ?? 'ERROR'}: ${err?.message}`),
    );
  });
}
