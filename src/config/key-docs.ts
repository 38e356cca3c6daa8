/**
 * What the config schema knows at a key path, for error messages: the keys an object takes, and the heading of
 * docs/configuration.md that describes a key. The schema is read through the same JSON Schema that
 * tools/docs/config-reference.ts turns into that page, with the same section names (`a.b`, `a.b[]`, `a.b.<name>`).
 */
import { z } from 'zod';
import { agentConfigSchema } from './schema.ts';

interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
}

export type KeyPath = readonly PropertyKey[];

/** Where the page of the config reference lives, in a checkout and in the package. */
export const CONFIG_DOCS = 'docs/configuration.md';

const isMap = (s: JsonSchema) => s.properties === undefined && typeof s.additionalProperties === 'object';

/** A union's members that are objects, as one object with every member's keys (a key of any kind is known). */
function merged(s: JsonSchema): JsonSchema {
  const members = (s.oneOf ?? s.anyOf)?.filter((m) => m.properties !== undefined || m.type === 'array' || isMap(m));
  if (!members || members.length === 0) return s;
  if (members.length === 1) return members[0]!;
  const properties: Record<string, JsonSchema> = {};
  for (const m of members) Object.assign(properties, m.properties);
  return { type: 'object', properties };
}

/** The schema at `path` of `root` and its section of the docs, or undefined where the schema has no such key. */
function walk(root: JsonSchema, path: KeyPath): { schema: JsonSchema; section: string } | undefined {
  let schema = root;
  let section = '';
  for (const segment of path) {
    schema = merged(schema);
    if (schema.type === 'array' && schema.items) [schema, section] = [schema.items, `${section}[]`];
    else if (isMap(schema)) [schema, section] = [schema.additionalProperties as JsonSchema, `${section}.<name>`];
    else {
      const next = schema.properties?.[String(segment)];
      if (!next) return undefined;
      [schema, section] = [next, section === '' ? String(segment) : `${section}.${String(segment)}`];
    }
  }
  return { schema: merged(schema), section };
}

/** GitHub's anchor of a heading `` `path` `` (as tools/docs/config-reference.ts writes them). */
const anchor = (section: string) =>
  section === ''
    ? 'top-level-keys'
    : section
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
        .replace(/ /g, '-');

/** Questions about the config schema at a key path; converts the schema once (a few ms), on an error path only. */
export function createKeyDocs() {
  const root = z.toJSONSchema(agentConfigSchema, { io: 'input', target: 'draft-2020-12' }) as JsonSchema;
  return {
    /** The keys the object at `path` takes (empty when `path` is not an object of the schema). */
    keysAt: (path: KeyPath): string[] => Object.keys(walk(root, path)?.schema.properties ?? {}),
    /** `docs/configuration.md#…`: the section that lists the keys of the object at `objectPath`. */
    docsLink: (objectPath: KeyPath): string => {
      // The nearest object the schema knows (a path may go on into a value the schema does not describe).
      for (let n = objectPath.length; n >= 0; n--) {
        const found = walk(root, objectPath.slice(0, n));
        if (found?.schema.properties) return `${CONFIG_DOCS}#${anchor(found.section)}`;
      }
      return `${CONFIG_DOCS}#${anchor('')}`;
    },
  };
}

export type KeyDocs = ReturnType<typeof createKeyDocs>;
