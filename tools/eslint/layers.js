// @ts-check
/**
 * `agentd/layers`, a rule of the ESLint plugin `agentd` (tools/eslint/plugin.js): the house rules on imports
 * (ARCHITECTURE.md §6), checked on every file under `src/` and `machines/` (eslint.config.js). The default export
 * is a plugin of this rule alone.
 *
 * Contracts:
 * - A component is a folder or a single file (a path relative to the repository root). A file
 *   belongs to the component with the longest matching path. A checked file of no component is an
 *   error: every file under `src/` and `machines/` belongs to a component of the table.
 * - A relative import from one component to another is allowed only when the importer lists the
 *   target in `uses`. The `uses` graph must be acyclic: a cycle is a configuration error, thrown
 *   when the rule starts, so no two folders can ever import each other. So must it be folder by folder
 *   (`folderOf`: a sub-folder's or a file's row counts with the top folder it lies in, `src/memory/feature`
 *   with `src/memory`): a folder never imports a folder that imports it, through any row.
 * - A relative import of a path that belongs to no component (`tools/`, `test/`, `bench/`, `web/`,
 *   package.json, an unlisted folder) is an error: components import only components. JSON and other
 *   assets inside a component are imported like its code.
 * - No file cycles: a relative import that closes a cycle of imports between files of components is
 *   an error on that import, naming the shortest cycle through it (repository paths, the linted file
 *   first and last). Edges are all relative imports (tools/eslint/file-cycles.js): of the text being
 *   linted for its own file, of the files on disk for the others.
 * - Imports are found by one scan of the text (TypeScript's pre-processor: comments and strings
 *   skipped), so every rule above sees the same imports.
 * - An external package listed in `externals` (by name or name prefix) may be imported only by the
 *   components listed for it.
 * - `import type` and type-level `import('…')` count like any other import: a type cycle is still a
 *   cycle, between folders and between files.
 */
import { dirname, relative, resolve } from 'node:path';
import { cyclesThrough, importsOf } from './file-cycles.js';

/** @typedef {{ path: string, uses?: string[] }} Component */
/** @typedef {{ root: string, components: Record<string, Component>, externals?: Record<string, string[]> }} LayersOptions */

/** @param {Record<string, Component>} components */
export function findCycle(components) {
  /** @type {Map<string, 'open' | 'done'>} */
  const state = new Map();
  /** @param {string} name @param {string[]} path @returns {string[] | undefined} */
  const visit = (name, path) => {
    if (state.get(name) === 'done') return undefined;
    if (state.get(name) === 'open') return [...path.slice(path.indexOf(name)), name];
    state.set(name, 'open');
    for (const next of components[name]?.uses ?? []) {
      const cycle = visit(next, [...path, name]);
      if (cycle) return cycle;
    }
    state.set(name, 'done');
    return undefined;
  };
  for (const name of Object.keys(components)) {
    const cycle = visit(name, []);
    if (cycle) return cycle;
  }
  return undefined;
}

/** The top folder a component lies in: `src/<name>` (a file there too), else its first segment (`machines`). @param {string} path */
export const folderOf = (path) =>
  path
    .split('/')
    .slice(0, path.startsWith('src/') ? 2 : 1)
    .join('/');

/**
 * A cycle of the table folder by folder (each row counted with its top folder, imports within a folder left out),
 * as folders, or undefined. @param {Record<string, Component>} components
 */
export function findFolderCycle(components) {
  /** @type {Record<string, { path: string, uses: string[] }>} */
  const folders = {};
  for (const { path, uses = [] } of Object.values(components)) {
    const folder = folderOf(path);
    const row = (folders[folder] ??= { path: folder, uses: [] });
    for (const used of uses) {
      const target = components[used] && folderOf(components[used].path);
      if (target && target !== folder && !row.uses.includes(target)) row.uses.push(target);
    }
  }
  return findCycle(folders);
}

/** @param {string} file repository-relative, `/`-separated @param {Record<string, Component>} components */
export function componentOf(file, components) {
  let best;
  let bestLength = -1;
  for (const [name, { path }] of Object.entries(components)) {
    const inside = file === path || file.startsWith(`${path}/`);
    if (inside && path.length > bestLength) [best, bestLength] = [name, path.length];
  }
  return best;
}

const TABLE = 'tools/eslint/layers-config.js';

/** @type {import('eslint').Rule.RuleModule} */
const layers = {
  meta: {
    type: 'problem',
    docs: {
      description:
        'Components import only the components and packages the layer table allows, and files never import each other in a cycle',
    },
    schema: [{ type: 'object' }],
    messages: {
      unlisted: `{{file}} belongs to no component of the layer table: add its folder to ${TABLE} as a component with the components it uses (or move the file into an existing component)`,
      component: `{{from}} may not import {{to}} ({{target}}); {{from}} uses: {{allowed}}. Move what both need down into a component {{from}} uses, or, if the layers allow it, add {{to}} to the uses of {{from}} in ${TABLE} (the table must stay acyclic)`,
      unknown: '{{from}} may never import {{target}} ({{specifier}}): not a component. {{hint}}',
      cycle:
        'import cycle: {{cycle}}. Files never import each other, type imports included: move what they share into a file that imports none of them',
      external: '{{from}} may not import {{target}}; only {{owners}} may',
    },
  },
  create(context) {
    const options = /** @type {LayersOptions} */ (context.options[0]);
    const { root, components, externals = {} } = options;
    const cycle = findCycle(components);
    if (cycle) throw new Error(`agentd/layers: the components import each other in a cycle: ${cycle.join(' → ')}`);
    const folders = findFolderCycle(components);
    if (folders)
      throw new Error(
        `agentd/layers: the folders import each other in a cycle (a sub-folder's row counts with its folder): ${folders.join(' → ')}`,
      );
    /** @param {string} absolute */
    const repoPath = (absolute) => relative(root, absolute).split('\\').join('/');
    const file = repoPath(context.filename);
    const from = componentOf(file, components);
    const { sourceCode } = context;
    /** @param {number} start @param {number} end */
    const loc = (start, end) => ({ start: sourceCode.getLocFromIndex(start), end: sourceCode.getLocFromIndex(end) });
    if (!from) {
      return { Program: (node) => context.report({ node, messageId: 'unlisted', data: { file } }) };
    }
    const allowed = new Set([from, ...(components[from]?.uses ?? [])]);

    /** @param {string} specifier @param {number} start @param {number} end */
    const checkRelative = (specifier, start, end) => {
      const target = repoPath(resolve(dirname(context.filename), specifier));
      const to = componentOf(target, components);
      if (!to) {
        const top = target.split('/')[0] ?? target;
        const hint =
          top === 'src' || top === 'machines'
            ? `Add its folder to ${TABLE} as a component and to the uses of ${from}, or move it into a component ${from} uses`
            : 'src/ and machines/ import only their components (never tools/, test/, bench/ or web/): move what you need into a component';
        context.report({ loc: loc(start, end), messageId: 'unknown', data: { from, target, specifier, hint } });
      } else if (!allowed.has(to)) {
        context.report({
          loc: loc(start, end),
          messageId: 'component',
          data: { from, to, target: specifier, allowed: [...allowed].join(', ') },
        });
      }
    };
    /** @param {string} specifier @param {number} start @param {number} end */
    const checkExternal = (specifier, start, end) => {
      for (const [name, owners] of Object.entries(externals)) {
        if ((specifier === name || specifier.startsWith(`${name}/`)) && !owners.includes(from)) {
          context.report({
            loc: loc(start, end),
            messageId: 'external',
            data: { from, target: specifier, owners: owners.join(', ') },
          });
        }
      }
    };

    return {
      Program() {
        const { specifiers, edges } = importsOf(context.filename, sourceCode.text);
        for (const { specifier, start, end } of specifiers) {
          if (specifier.startsWith('.')) checkRelative(specifier, start, end);
          else checkExternal(specifier, start, end);
        }
        const inComponent = (/** @type {string} */ f) => componentOf(repoPath(f), components) !== undefined;
        for (const { edge, cycle: files } of cyclesThrough(context.filename, edges, inComponent)) {
          context.report({
            loc: loc(edge.start, edge.end),
            messageId: 'cycle',
            data: { cycle: files.map(repoPath).join(' → ') },
          });
        }
      },
    };
  },
};

export default { rules: { layers } };
