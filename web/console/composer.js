// @ts-check
// The composer: sends the typed message (with an image and the resources attached so far) to the shown session;
// Enter sends, Shift+Enter breaks the line. A message sent while the socket is not open (the page just loaded, agentd
// restarting) is queued, not refused: the box is cleared and the queue goes, in order, once the link opens (`flush`).

/**
 * @param {{ form: HTMLFormElement, message: HTMLTextAreaElement, file: HTMLInputElement }} elements
 * @param {{
 *   live: () => import('./live.js').Live | undefined,
 *   sessionId: () => string,
 *   attachments: ReturnType<typeof import('./resources.js').createAttachments>,
 *   status: (text: string) => void,
 * }} deps
 * @returns {{ flush: () => void }}  `flush`: sends what waits (call it when the link opens)
 */
export function bindComposer({ form, message, file }, { live, sessionId, attachments, status }) {
  /** Messages not sent yet, oldest first. @type {object[]} */
  const waiting = [];

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void send(message.value.trim());
  });

  /** @param {string} content */
  async function send(content) {
    if (!content) return;
    const image = await imageData(file.files?.[0]);
    const resources = attachments.peek();
    waiting.push({
      type: 'message',
      content,
      sessionId: sessionId(),
      ...(image && { imageData: image }),
      ...(resources.length > 0 && { resources }),
    });
    message.value = '';
    file.value = '';
    attachments.take();
    flush();
    if (waiting.length > 0) status('not connected yet: the message goes once connected');
  }

  function flush() {
    for (let next = waiting[0]; next && live()?.send(next); next = waiting[0]) waiting.shift();
  }

  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  return { flush };
}

/** @param {File | undefined} file */
async function imageData(file) {
  if (!file) return undefined;
  const url = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(file);
  });
  return { base64: url.slice(url.indexOf(',') + 1), mimeType: file.type };
}
