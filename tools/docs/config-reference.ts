/**
 * Writes docs/configuration.md, the reference of the agent file, from the config schema
 * (src/config/schema.ts, through the same JSON Schema as agents/agent.schema.json): every key by its
 * path, with its type, default, allowed values and description (the schema's `.describe()` texts).
 * With --check it only compares and exits 1 when the committed file is stale (CI runs it that way);
 * `--out FILE` writes (or checks) another file.
 *
 *   npm run schema          # writes agents/agent.schema.json and docs/configuration.md
 *   npm run schema:check    # both current? (also part of npm run docs:check)
 *
 * Conventions of the descriptions: a key whose default is worked out at run time (no `default` in the
 * schema) ends its description with `Default: <text>.`, which goes to the Default column.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { agentConfigSchema } from '../../src/config/schema.ts';

/** The JSON Schema keywords zod emits for the config (draft 2020-12). */
export interface JsonSchema {
  type?: string;
  description?: string;
  default?: unknown;
  const?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
}

const TARGET = fileURLToPath(new URL('../../docs/configuration.md', import.meta.url));

/** The agent file's JSON Schema, as `npm run schema` writes it to agents/agent.schema.json. */
export const configJsonSchema = (): JsonSchema =>
  z.toJSONSchema(agentConfigSchema, { io: 'input', target: 'draft-2020-12' }) as JsonSchema;

/** One row of a section's table. */
interface Row {
  path: string;
  type: string;
  default: string;
  allowed: string;
  description: string;
}

/** A heading with its text and table: an object of the schema (or the items of an array, or a map's values). */
interface Section {
  path: string;
  description: string;
  notes: string[];
  rows: Row[];
}

/** A key path as a heading anchor (GitHub's slug of `` `path` ``). */
const anchor = (path: string) =>
  path
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
const code = (text: string) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);
const cell = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A value in YAML's flow style, as an agent file would write it: `[GET, POST]`, `{ type: jsonl }`, `""`. */
function flow(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(flow).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length === 0 ? '{}' : `{ ${entries.map(([k, v]) => `${k}: ${flow(v)}`).join(', ')} }`;
  }
  if (typeof value === 'string') {
    const plain =
      /^[A-Za-z_./][\w ./@:+-]*$/.test(value) &&
      !/^(true|false|null|yes|no|on|off|~)$/i.test(value) &&
      !/[:#]\s|\s$|:$/.test(value);
    return plain ? value : JSON.stringify(value);
  }
  return JSON.stringify(value);
}

/** A default or allowed value as the docs write it: in code, YAML flow style. */
const literal = (value: unknown): string => code(flow(value));

const isObject = (s: JsonSchema) => s.type === 'object' && s.properties !== undefined;
const isMap = (s: JsonSchema) =>
  s.type === 'object' && s.properties === undefined && typeof s.additionalProperties === 'object';
const variants = (s: JsonSchema) => s.oneOf ?? s.anyOf;
/** A union of objects told apart by one constant property (`type: stdio` | `type: http`). */
function discriminator(s: JsonSchema): string | undefined {
  const members = variants(s);
  if (!members?.every(isObject)) return undefined;
  const keys = Object.keys(members[0]!.properties!).filter((k) =>
    members.every((m) => m.properties?.[k]?.const !== undefined),
  );
  return keys[0];
}
/** Whether a key gets its own section (an object with keys, a list of objects, a map of objects, a union of objects). */
const nests = (s: JsonSchema): boolean =>
  isObject(s) ||
  (s.type === 'array' && s.items !== undefined && nests(s.items)) ||
  (isMap(s) && nests(s.additionalProperties as JsonSchema)) ||
  discriminator(s) !== undefined;

/** Where a nested key's section is: `a.b` (object), `a.b[]` (list items), `a.b.<name>` (map values). */
function childPath(path: string, s: JsonSchema): string {
  if (s.type === 'array') return childPath(`${path}[]`, s.items!);
  if (isMap(s)) return childPath(`${path}.<name>`, s.additionalProperties as JsonSchema);
  return path;
}

/** The type of a key in words: `integer`, `string[]`, `map of string to string`, `boolean or { form?: boolean }`. */
function typeOf(s: JsonSchema, link?: string): string {
  const members = variants(s);
  if (members)
    return discriminator(s) !== undefined && link
      ? `[object](#${anchor(link)})`
      : members.map((m) => typeOf(m)).join(' or ');
  if (s.type === 'array')
    return s.items ? (nests(s.items) && link ? `[object](#${anchor(link)})[]` : `${typeOf(s.items)}[]`) : 'array';
  if (isMap(s)) {
    const value = s.additionalProperties as JsonSchema;
    return `map of ${s.propertyNames?.pattern ? 'name' : 'string'} to ${nests(value) && link ? `[object](#${anchor(link)})` : typeOf(value)}`;
  }
  if (isObject(s)) {
    if (link) return `[object](#${anchor(link)})`;
    const required = new Set(s.required ?? []);
    return `{ ${Object.entries(s.properties!)
      .map(([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${typeOf(v)}`)
      .join(', ')} }`;
  }
  if (s.format === 'uri') return 'URL';
  return s.type ?? (s.const !== undefined ? typeof s.const : 'any');
}

/** The allowed values and bounds of a key. */
function allowedOf(s: JsonSchema): string {
  const members = variants(s);
  if (members && discriminator(s) === undefined) return members.map(allowedOf).filter(Boolean).join('; ');
  const parts: string[] = [];
  if (s.const !== undefined) parts.push(literal(s.const));
  if (s.enum) parts.push(s.enum.map(literal).join(', '));
  const low =
    s.exclusiveMinimum !== undefined
      ? s.type === 'integer'
        ? `≥ ${s.exclusiveMinimum + 1}`
        : `> ${s.exclusiveMinimum}`
      : s.minimum !== undefined
        ? `≥ ${s.minimum}`
        : undefined;
  const high =
    s.exclusiveMaximum !== undefined
      ? `< ${s.exclusiveMaximum}`
      : s.maximum !== undefined && s.maximum < MAX_SAFE
        ? `≤ ${s.maximum}`
        : undefined;
  if (low && high && s.minimum !== undefined && s.maximum !== undefined) parts.push(`${s.minimum} to ${s.maximum}`);
  else parts.push(...[low, high].filter((p): p is string => p !== undefined));
  if (s.minLength !== undefined || s.maxLength !== undefined) {
    parts.push(
      s.maxLength === undefined
        ? s.minLength === 1
          ? 'not empty'
          : `at least ${s.minLength} characters`
        : s.minLength === undefined || s.minLength === 0
          ? `at most ${s.maxLength} characters`
          : `${s.minLength} to ${s.maxLength} characters`,
    );
  }
  if (s.pattern) parts.push(`matches ${code(s.pattern)}`);
  if (s.type === 'array') {
    const items = s.items ? allowedOf(s.items) : '';
    if (items && !nests(s.items!)) parts.push(`each: ${items}`);
    if (s.minItems !== undefined) parts.push(`at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`);
    if (s.maxItems !== undefined) parts.push(`at most ${s.maxItems} items`);
  }
  if (isMap(s) && s.propertyNames?.pattern) parts.push(`names match ${code(s.propertyNames.pattern)}`);
  return parts.join('; ');
}

/** A description and the default it states in words (`… Default: 10 × ws.points.`). */
function splitDefault(description: string | undefined): { text: string; stated?: string } {
  if (!description) return { text: '' };
  const m = /^([\s\S]*?)\s*Default: ([\s\S]+?)\.?$/.exec(description);
  return m ? { text: m[1]!, stated: m[2]! } : { text: description };
}

function defaultOf(s: JsonSchema, required: boolean, stated: string | undefined, key: string): string {
  if (stated !== undefined) return stated;
  if (s.default === undefined) return required ? 'required' : '—';
  // An object that defaults to `{}` takes its keys' defaults: they are in its section.
  if (isObject(s) && typeof s.default === 'object' && s.default !== null && Object.keys(s.default).length === 0)
    return '';
  const value = literal(s.default);
  return typeof s.default === 'number' && /Bytes$/.test(key) && s.default % (1024 * 1024) === 0
    ? `${value} (${s.default / 1024 / 1024} MiB)`
    : value;
}

/** Every section of the schema, depth first, the root's keys first. */
export function sectionsOf(root: JsonSchema): Section[] {
  const sections: Section[] = [];
  const visit = (path: string, s: JsonSchema, note?: string) => {
    const section: Section = {
      path,
      description: splitDefault(s.description).text,
      notes: note ? [note] : [],
      rows: [],
    };
    sections.push(section);
    const later: [string, JsonSchema, string?][] = [];
    const addKeys = (object: JsonSchema, only?: string) => {
      const required = new Set(object.required ?? []);
      for (const [key, value] of Object.entries(object.properties ?? {})) {
        const full = path === '' ? key : `${path}.${key}`;
        const sub = nests(value) ? childPath(full, value) : undefined;
        const { text, stated } = splitDefault(value.description);
        section.rows.push({
          path: full,
          type: typeOf(value, sub),
          default: defaultOf(value, required.has(key), stated, key),
          allowed: allowedOf(value),
          description: [only && `Only with ${only}.`, text].filter(Boolean).join(' '),
        });
        if (sub)
          later.push([
            sub,
            value.type === 'array' ? value.items! : isMap(value) ? (value.additionalProperties as JsonSchema) : value,
          ]);
      }
    };
    const by = discriminator(s);
    if (by) {
      const members = variants(s)!;
      const kinds = members.map((m) => `${by}: ${String(m.properties![by]!.const)}`);
      section.notes.push(`One of ${kinds.map(code).join(', ')}: the keys marked *Only with* belong to one kind.`);
      const seen = new Set<string>();
      for (const [i, m] of members.entries()) {
        for (const [key, value] of Object.entries(m.properties!)) {
          if (seen.has(key)) continue;
          const holders = members.filter((o) => o.properties?.[key] !== undefined);
          const same = holders.every(
            (o) =>
              JSON.stringify(o.properties![key]) === JSON.stringify(value) &&
              (o.required ?? []).includes(key) === (m.required ?? []).includes(key),
          );
          if (key === by) {
            seen.add(key);
            const kindsText = members
              .map(
                (o) =>
                  `${code(String(o.properties![by]!.const))}${o.description ? `: ${o.description.charAt(0).toLowerCase()}${o.description.slice(1).replace(/\.$/, '')}` : ''}`,
              )
              .join('; ');
            addKeys({
              properties: {
                [key]: {
                  type: 'string',
                  enum: members.map((o) => o.properties![by]!.const),
                  description: `${value.description ? `${value.description} ` : ''}${kindsText}.`,
                },
              },
              required: [key],
            });
          } else if (same) {
            seen.add(key);
            addKeys(
              { properties: { [key]: value }, required: (m.required ?? []).filter((r) => r === key) },
              holders.length === members.length
                ? undefined
                : holders.map((o) => code(`${by}: ${String(o.properties![by]!.const)}`)).join(' or '),
            );
          } else {
            addKeys(
              { properties: { [key]: value }, required: (m.required ?? []).filter((r) => r === key) },
              code(kinds[i]!),
            );
          }
        }
      }
    } else {
      addKeys(s);
    }
    for (const [p, v, n] of later) visit(p, v, n);
  };
  visit('', root);
  return sections;
}

const HEADER = `<!-- Generated from src/config/schema.ts by \`npm run schema\` (tools/docs/config-reference.ts): edit the schema's descriptions, not this file. CI fails when it is stale (\`npm run schema:check\`). -->

# Configuration reference

The agent file is YAML (JSON is YAML too). Its JSON Schema is [\`agents/agent.schema.json\`](../agents/agent.schema.json),
generated from the same zod schema as this page; editors that speak the YAML language server complete and check
keys from the file's first line (\`# yaml-language-server: $schema=…\`, which \`agentd init\` writes). A file that
does not fit is refused at start with every problem listed (exit code 1). Unknown keys are errors.

- **Environment variables.** \`$NAME\` and \`\${NAME}\` are replaced from the environment in every string value
  (after parsing, so a value never changes the document's structure); \`$$\` is a literal \`$\`. A variable that is
  not set is an error naming it and where it is used — never a silent empty string; every unset variable is
  named at once, not only the first.
- **Paths** written in the file are relative to the file's folder: \`storage.dir\`, \`server.auth.jwt.jwksFile\`, a
  stdio server's \`cwd\`, and its \`command\` and \`args\` that start with \`./\` or \`../\` (bare words stay as written).
  \`storage.dir\` unwritten is a folder of the file's own in the per-user data folder, whatever the working
  folder ([where data lives](sessions.md#where-data-lives)).
- **Command-line flags** override \`server.host\` (\`--host\`), \`server.port\` (\`--web-port\`), \`server.inspect\`
  (\`--inspect\`), \`server.inspectContent\` (\`--inspect-content\`) and \`server.inspectRelay\` (\`--inspect-relay\`):
  see [the command line](command-line.md).
- **The running config** is \`GET /api/config.yaml\`, secrets redacted ([API reference](api.md#get-apiconfigyaml)).

Durations are milliseconds (\`…Ms\`, \`timeout\`) unless the key says otherwise (\`durationSec\`), sizes are bytes.
In the tables, *required* means the key has no default and must be given; *—* means absent unless set.
The guides explain what the keys do together: [models and providers](models.md), [tool servers](tool-servers.md),
[approvals](approvals.md), [sessions](sessions.md), [auth](auth.md), [scaling out](scaling-out.md).
`;

/** docs/configuration.md. */
export function renderConfigReference(schema: JsonSchema = configJsonSchema()): string {
  const sections = sectionsOf(schema);
  const title = (path: string) => (path === '' ? 'Top-level keys' : code(path));
  const depth = (path: string) => path.split('.').filter((p) => p !== '<name>').length - 1;
  const toc = sections.map(
    (s) =>
      `${'  '.repeat(s.path === '' ? 0 : depth(s.path))}- [${title(s.path)}](#${s.path === '' ? 'top-level-keys' : anchor(s.path)})`,
  );
  const body = sections.map((s) =>
    [
      `## ${title(s.path)}`,
      '',
      ...(s.description ? [s.description, ''] : []),
      ...(s.notes.length ? [...s.notes, ''] : []),
      '| Key | Type | Default | Allowed values | Description |',
      '|---|---|---|---|---|',
      ...s.rows.map(
        (r) =>
          `| ${code(r.path)} | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.allowed)} | ${cell(r.description)} |`,
      ),
      '',
    ].join('\n'),
  );
  return `${HEADER}\n## Contents\n\n${toc.join('\n')}\n\n${body.join('\n')}`;
}

/** Every key path of the schema without a description (a unit test wants none). */
export function undescribed(schema: JsonSchema = configJsonSchema()): string[] {
  return sectionsOf(schema).flatMap((s) =>
    s.rows.filter((r) => r.description.replace(/^Only with [^.]*\.\s*/, '') === '').map((r) => r.path),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out = args.includes('--out') ? resolve(args[args.indexOf('--out') + 1] ?? '') : TARGET;
  const wanted = renderConfigReference();
  if (args.includes('--check')) {
    const current = await readFile(out, 'utf8').catch(() => '');
    if (current !== wanted) {
      console.error(`${out} is stale: run npm run schema and commit the result`);
      process.exit(1);
    }
    console.log(`${out} is up to date`);
  } else {
    await writeFile(out, wanted);
    console.log(`wrote ${out}`);
  }
}
