/**
 * docs/configuration.md is generated from the config schema (tools/docs/config-reference.ts): it is
 * current, every key of the schema is in it with a description, and --check fails on a stale file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  configJsonSchema,
  renderConfigReference,
  undescribed,
  type JsonSchema,
} from '../../tools/docs/config-reference.ts';
import { ROOT } from '../support/paths.ts';

const doc = renderConfigReference();
const row = (path: string) =>
  doc
    .split('\n')
    .find((l) => l.startsWith(`| \`${path}\` |`))
    ?.split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((c) => c.trim());

/** Every key path of a JSON Schema, as the reference writes it (`a.b`, `a.<name>.c`, `a[].b`). */
function paths(s: JsonSchema, at = ''): string[] {
  const join = (key: string) => (at === '' ? key : `${at}.${key}`);
  const out: string[] = [];
  for (const member of [s, ...(s.oneOf ?? []), ...(s.anyOf ?? [])]) {
    for (const [key, value] of Object.entries(member.properties ?? {})) {
      out.push(join(key));
      const inner =
        value.type === 'array' && value.items
          ? { path: `${join(key)}[]`, s: value.items }
          : typeof value.additionalProperties === 'object' && !value.properties
            ? { path: `${join(key)}.<name>`, s: value.additionalProperties }
            : { path: join(key), s: value };
      if (inner.s.properties || inner.s.oneOf?.some((m) => m.properties)) out.push(...paths(inner.s, inner.path));
    }
  }
  return out;
}

describe('the configuration reference', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'agentd-config-ref-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('is the committed docs/configuration.md (npm run schema rewrites it)', () => {
    expect(readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8')).toBe(doc);
  });

  it('lists every key of the schema, each with a description', () => {
    const all = [...new Set(paths(configJsonSchema()))];
    expect(all.length).toBeGreaterThan(100);
    expect(all.filter((p) => row(p) === undefined)).toEqual([]);
    expect(undescribed()).toEqual([]);
  });

  it('gives each key its type, default and allowed values, nested by path', () => {
    expect(row('llm.compaction.threshold')).toEqual([
      '`llm.compaction.threshold`',
      'number',
      '`0.8`',
      '> 0; ≤ 1',
      expect.stringMatching(/share of the context window/),
    ]);
    expect(row('llm.model')?.[2]).toBe('required');
    expect(row('llm.provider')?.[3]).toContain('`ollama`');
    expect(row('mcpServers.<name>.command')?.[4]).toMatch(/^Only with `type: stdio`\. /);
    expect(row('mcpServers.<name>.oauth.grant')?.[2]).toBe('`authorization_code`');
    expect(row('server.auth.keys[].scopes')?.[3]).toBe('each: `chat`, `inspect`, `schedule`, `admin`; at least 1 item');
    expect(row('server.limits.maxBodyBytes')?.[2]).toBe('`14680064` (14 MiB)');
    // A default worked out at run time is the description's `Default: …`.
    expect(row('server.limits.wsPerIp')?.[2]).toBe('10 × `ws.points`');
    expect(row('server.port')?.[2]).toBe('`3001`');
    expect(doc).toContain('## `storage`\n');
  });

  it('--check fails on a stale file and passes on a current one', async () => {
    const run = (file: string) =>
      promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', join(ROOT, 'tools/docs/config-reference.ts'), '--check', '--out', file],
        { cwd: ROOT },
      ).then(
        () => 0,
        (e: { code: number }) => e.code,
      );
    const stale = join(tmp, 'stale.md');
    writeFileSync(stale, doc.replace('| `llm.model` |', '| `llm.modelName` |'));
    const current = join(tmp, 'current.md');
    writeFileSync(current, doc);
    expect(await run(stale)).toBe(1);
    expect(await run(current)).toBe(0);
  });
});
