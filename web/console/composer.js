// @ts-check
// The composer: sends the typed message (with an image and the resources attached so far) to the shown session;
// Enter sends, Shift+Enter breaks the line. Nothing is cleared when the socket is down.

/**
 * @param {{ form: HTMLFormElement, message: HTMLTextAreaElement, file: HTMLInputElement }} elements
 * @param {{
 *   live: () => import('./live.js').Live | undefined,
 *   sessionId: () => string,
 *   attachments: ReturnType<typeof import('./resources.js').createAttachments>,
 *   status: (text: string) => void,
 * }} deps
 */
export function bindComposer({ form, message, file }, { live, sessionId, attachments, status }) {
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void send(message.value.trim());
  });

  /** @param {string} content */
  async function send(content) {
    if (!content) return;
    const image = await imageData(file.files?.[0]);
    const resources = attachments.peek();
    if (
      !live()?.send({
        type: 'message',
        content,
        sessionId: sessionId(),
        ...(image && { imageData: image }),
        ...(resources.length > 0 && { resources }),
      })
    )
      return status('not connected; try again in a moment');
    message.value = '';
    file.value = '';
    attachments.take();
  }

  message.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
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
