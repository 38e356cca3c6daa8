// @ts-check
/**
 * ESLint plugin `agentd` with one rule, `agentd/layers`: the house rules on imports
 * (ARCHITECTURE.md §6), checked on every file of a component.
 *
 * Contracts:
 * - A component is a folder or a single file (a path relative to the repository root). A file
 *   belongs to the component with the longest matching path; files of no component are not checked.
 * - A relative import from one component to another is allowed only when the importer lists the
 *   target in `uses`. The `uses` graph must be acyclic: a cycle is a configuration error, thrown
 *   when the rule starts, so no two folders can ever import each other.
 * - An external package listed in `externals` (by name or name prefix) may be imported only by the
 *   components listed for it.
 * - `import type` counts like any other import: a type cycle is still a cycle between folders.
 */
import { dirname, relative, resolve } from 'node:path';

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

/** @type {import('eslint').Rule.RuleModule} */
const layers = {
  meta: {
    type: 'problem',
    docs: { description: 'Components import only the components and packages the layer table allows' },
    schema: [{ type: 'object' }],
    messages: {
      component: '{{from}} may not import {{to}} ({{target}}); {{from}} uses: {{allowed}}',
      external: '{{from}} may not import {{target}}; only {{owners}} may',
    },
  },
  create(context) {
    const options = /** @type {LayersOptions} */ (context.options[0]);
    const { root, components, externals = {} } = options;
    const cycle = findCycle(components);
    if (cycle) throw new Error(`agentd/layers: the components import each other in a cycle: ${cycle.join(' → ')}`);
    const file = relative(root, context.filename).split('\\').join('/');
    const from = componentOf(file, components);
    if (!from) return {};
    const allowed = new Set([from, ...(components[from]?.uses ?? [])]);

    /** @param {import('estree').Node} node @param {unknown} source */
    const check = (node, source) => {
      if (typeof source !== 'string') return;
      if (source.startsWith('.')) {
        const target = relative(root, resolve(dirname(context.filename), source)).split('\\').join('/');
        const to = componentOf(target, components);
        if (to && !allowed.has(to)) {
          context.report({ node, messageId: 'component', data: { from, to, target: source, allowed: [...allowed].join(', ') } });
        }
        return;
      }
      for (const [name, owners] of Object.entries(externals)) {
        if ((source === name || source.startsWith(`${name}/`)) && !owners.includes(from)) {
          context.report({ node, messageId: 'external', data: { from, target: source, owners: owners.join(', ') } });
        }
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

export default { rules: { layers } };
