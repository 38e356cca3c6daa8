/**
 * The console's header counts the tool servers its panel lists. The console renders the model's replies as markdown in a real Chromium (web/console/markdown.js):
 * headings, emphasis, lists, code fences, tables and links become those elements, a streamed reply
 * re-renders in the one entry it started in, a user's own message stays plain text, and a reply
 * that tries script (`<script>`, `<img onerror>`, `javascript:` and `data:` links, `<iframe>`, HTML
 * inside markdown) renders inert: nothing runs, no handler attribute, no such link or element.
 */
import { describe, expect, it } from 'vitest';
import { findChromium, useBrowserBench, watchFailures } from '../support/browser.ts';
import { fixturePath } from '../support/paths.ts';
import { PATIENT } from '../support/wait.ts';

const KEY = 'console-test-key-0123456789';
const chromiumPath = findChromium();

const RICH = [
  '# Plan',
  'Some **bold** words and `inline code`.',
  '',
  '- first',
  '- second',
  '',
  '```js',
  'const x = 1 < 2;',
  '```',
  '',
  '| name | size |',
  '|------|------|',
  '| a    | 1    |',
  '',
  'See [the docs](https://example.com/docs).',
].join('\n');

const ATTACK = [
  '## Attack',
  '<script>window.__pwned = "script"</script>',
  '<img src="x" onerror="window.__pwned = \'img\'">',
  '[js link](javascript:window.__pwned=1)',
  '[JS link](JaVaScRiPt:window.__pwned=2)',
  '[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '<iframe src="javascript:window.__pwned=3"></iframe>',
  '<a href="javascript:window.__pwned=4">raw link</a>',
  '**<span onmouseover="window.__pwned=5">inside bold</span>**',
  '![pic](x" onerror="window.__pwned=6)',
  'the end',
].join('\n');

describe.skipIf(!chromiumPath)('console markdown in Chromium', () => {
  const t = useBrowserBench(chromiumPath!, {
    server: { auth: { keys: [{ name: 'operator', key: KEY, scopes: ['admin'] }] }, limits: { rest: { points: 1000 } } },
    mcpServers: {
      echo: { type: 'stdio', command: process.execPath, args: [fixturePath('echo-server')] },
      broken: { type: 'stdio', command: process.execPath, args: ['-e', 'process.exit(3)'] },
    },
  });
  const send = async (text: string) => {
    const { page } = t.browser;
    await page.getByLabel('Message').fill(text);
    await page.getByLabel('Message').press('Enter');
  };

  it('renders a reply with headings, bold, a list, a code fence, a table and a link as those elements', async () => {
    const { page } = t.browser;
    await page.goto(`${t.svc.url}/`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByRole('button', { name: 'Use key' }).click();
    // The header counts the tool servers the panel lists, and says how many of them are connected.
    await page.locator('#server-echo .status', { hasText: 'connected' }).waitFor();
    await page.locator('#server-broken').waitFor();
    await expect
      .poll(() => page.locator('#status').textContent(), PATIENT)
      .toBe('ready · 2 tool servers (1 connected)');
    const failures = watchFailures(page);
    await send(`Show me **markdown** [[reply:${RICH}]]`);
    const reply = page.locator('.assistant[data-done="true"]', { hasText: 'Plan' }).last();
    await reply.waitFor({ timeout: PATIENT.timeout });
    expect(await reply.locator('h1').textContent()).toBe('Plan');
    expect(await reply.locator('strong').textContent()).toBe('bold');
    expect(await reply.locator('ul > li').allTextContents()).toEqual(['first', 'second']);
    expect(await reply.locator('pre > code').textContent()).toBe('const x = 1 < 2;\n');
    expect(
      await reply.locator('pre').evaluate((n) => n.ownerDocument.defaultView?.getComputedStyle(n).fontFamily),
    ).toMatch(/mono/);
    expect(await reply.locator('table th').allTextContents()).toEqual(['name', 'size']);
    expect(await reply.locator('table td').allTextContents()).toEqual(['a', '1']);
    const link = reply.locator('a', { hasText: 'the docs' });
    expect(await link.getAttribute('href')).toBe('https://example.com/docs');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    // The user's own message is shown as typed.
    const mine = page.locator('.user', { hasText: 'Show me' }).last();
    expect(await mine.locator('strong').count()).toBe(0);
    expect(await mine.textContent()).toContain('Show me **markdown**');
    await t.browser.screenshot('console-markdown');
    expect(failures.list()).toEqual([]);
    failures.stop();
  });

  it('renders an XSS attempt inert: nothing runs, no handler, no javascript: or data: link, no frame', async () => {
    const { page } = t.browser;
    await send(`Try this [[reply:${ATTACK}]]`);
    const reply = page.locator('.assistant[data-done="true"]', { hasText: 'the end' }).last();
    await reply.waitFor({ timeout: PATIENT.timeout });
    expect(await reply.locator('h2').textContent()).toBe('Attack');
    const seen = await reply.evaluate((li) => ({
      handlers: [...li.querySelectorAll('*')].flatMap((e) =>
        [...e.attributes].filter((a) => a.name.startsWith('on')).map((a) => `${e.tagName} ${a.name}`),
      ),
      hrefs: [...li.querySelectorAll('[href], [src]')].map((e) => e.getAttribute('href') ?? e.getAttribute('src')),
      dangerous: li.querySelectorAll('script, iframe, object, embed, form, style, span').length,
      links: [...li.querySelectorAll('a')].map((a) => [a.textContent, a.target, a.rel]),
      text: li.textContent ?? '',
    }));
    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(seen.handlers).toEqual([]);
    for (const url of seen.hrefs) expect(url).not.toMatch(/^\s*(javascript|data):/i);
    expect(seen.dangerous).toBe(0);
    for (const [, target, rel] of seen.links) expect([target, rel]).toEqual(['_blank', 'noopener noreferrer']);
    // The raw HTML is shown as what it is: text.
    expect(seen.text).toContain('<script>window.__pwned = "script"</script>');
    expect(seen.text).toContain('<iframe');
  });

  it('streams a reply into one entry, re-rendered as its markdown arrives', async () => {
    const { page } = t.browser;
    const long = Array.from({ length: 30 }, (_, i) => `- item **${i}**`).join('\n');
    await send(`Slowly [[rate:40]] [[reply:${long}]]`);
    const reply = page.locator('.assistant', { hasText: 'item 0' }).last();
    await reply.waitFor({ timeout: PATIENT.timeout });
    const entry = await reply.elementHandle();
    expect(await reply.getAttribute('data-done')).toBeNull(); // caught mid-stream
    await page.locator('.assistant[data-done="true"]', { hasText: 'item 29' }).waitFor({ timeout: PATIENT.timeout });
    expect(await entry.evaluate((n) => n.isConnected && n.getAttribute('data-done'))).toBe('true');
    expect(await reply.locator('ul > li > strong').count()).toBe(30);
  });
});
