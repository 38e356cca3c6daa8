/**
 * Lays out the statecharts the inspector page draws: for each machine, its states (nested) and
 * transitions, placed by elkjs's layered algorithm, written to machines/layouts.json. With --check it
 * only compares and exits 1 when the committed file is stale (CI runs it that way, like the schema).
 *
 *   npm run layouts        # after changing a machine
 *   npm run layouts:check
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { ELK as Elk, ELKConstructorArguments, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { mcpServerMachine } from '../../machines/mcp-server.machine.ts';
import { sessionMachine } from '../../machines/session.machine.ts';
import { turnMachine } from '../../machines/turn.machine.ts';

const target = fileURLToPath(new URL('../../machines/layouts.json', import.meta.url));
const MACHINES: AnyStateMachine[] = [sessionMachine, turnMachine, mcpServerMachine];
// The bundled build is CommonJS; its typings describe the ES default export.
const ELK = createRequire(import.meta.url)('elkjs/lib/elk.bundled.js') as new (args?: ELKConstructorArguments) => Elk;
const CHAR_PX = 8;
const LEAF = { height: 36, pad: 24 };

/** What the page draws: boxes by state path (`error.backoff`) and edges with their event and route. */
export interface Layout {
  width: number;
  height: number;
  nodes: { path: string; name: string; x: number; y: number; width: number; height: number; final: boolean }[];
  edges: {
    from: string;
    to: string;
    event: string;
    points: { x: number; y: number }[];
    label: { x: number; y: number };
  }[];
}

const pathOf = (node: AnyStateNode): string => node.path.join('.');
const eventLabel = (event: string): string =>
  event
    .replace(/^xstate\.done\.actor\..*/, 'done')
    .replace(/^xstate\.error\.actor\..*/, 'error')
    .replace(/^xstate\.after\.(\w+)\..*/, 'after $1');

function graphOf(machine: AnyStateMachine): ElkNode {
  const edges: ElkExtendedEdge[] = [];
  const build = (node: AnyStateNode): ElkNode => {
    const children = Object.values(node.states).map(build);
    const name = node.key;
    const transitions = [...node.transitions.entries()]
      .flatMap(([event, list]) => list.map((t) => ({ event, t })))
      .concat((node.always ?? []).map((t) => ({ event: 'always', t })));
    // Transitions of the machine itself (events handled in every state) have no box to start from.
    for (const { event, t } of node.path.length === 0 ? [] : transitions) {
      for (const to of t.target ?? []) {
        const text = eventLabel(event);
        edges.push({
          id: `e${edges.length}`,
          sources: [pathOf(node)],
          targets: [pathOf(to)],
          labels: [{ text, width: text.length * 7, height: 14 }],
        });
      }
    }
    return {
      id: pathOf(node),
      labels: [{ text: name }],
      ...(children.length
        ? { children, layoutOptions: { 'elk.padding': '[top=32,left=12,bottom=12,right=12]' } }
        : { width: Math.max(80, name.length * CHAR_PX + LEAF.pad), height: LEAF.height }),
    };
  };
  const root = build(machine.root);
  return {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.spacing.nodeNode': '24',
      'elk.layered.spacing.nodeNodeBetweenLayers': '48',
      'elk.edgeLabels.inline': 'true',
    },
    children: root.children ?? [],
    edges,
  };
}

function flatten(graph: ElkNode): Layout {
  const nodes: Layout['nodes'] = [];
  const offsets = new Map<string, { x: number; y: number }>([['root', { x: 0, y: 0 }]]);
  const walk = (node: ElkNode, ox: number, oy: number): void => {
    for (const child of node.children ?? []) {
      const x = ox + (child.x ?? 0);
      const y = oy + (child.y ?? 0);
      offsets.set(child.id, { x, y });
      nodes.push({
        path: child.id,
        name: child.labels?.[0]?.text ?? child.id,
        x,
        y,
        width: child.width ?? 0,
        height: child.height ?? 0,
        final: false,
      });
      walk(child, x, y);
    }
  };
  walk(graph, 0, 0);
  const edges = (graph.edges ?? []).map((e) => {
    // elk gives edge coordinates relative to the edge's container.
    const base = offsets.get((e as ElkExtendedEdge & { container?: string }).container ?? 'root') ?? { x: 0, y: 0 };
    const section = e.sections?.[0];
    const points = section
      ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((p) => ({
          x: p.x + base.x,
          y: p.y + base.y,
        }))
      : [];
    const label = e.labels?.[0];
    return {
      from: e.sources[0]!,
      to: e.targets[0]!,
      event: label?.text ?? '',
      points,
      label: { x: (label?.x ?? 0) + base.x, y: (label?.y ?? 0) + base.y },
    };
  });
  return { width: graph.width ?? 0, height: graph.height ?? 0, nodes, edges };
}

export async function renderLayouts(): Promise<string> {
  const elk = new ELK();
  const layouts: Record<string, Layout> = {};
  for (const machine of MACHINES) {
    const layout = flatten(await elk.layout(graphOf(machine)));
    const finals = new Set(
      Object.values(machine.root.states).flatMap(function finals(n: AnyStateNode): string[] {
        return [...(n.type === 'final' ? [pathOf(n)] : []), ...Object.values(n.states).flatMap(finals)];
      }),
    );
    for (const node of layout.nodes) node.final = finals.has(node.path);
    layouts[machine.id] = layout;
  }
  return `${JSON.stringify(layouts, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v) : v), 1)}\n`;
}

const wanted = await renderLayouts();
if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== wanted) {
    console.error(`${target} is stale: run npm run layouts and commit the result`);
    process.exit(1);
  }
  console.log('machines/layouts.json is up to date');
} else {
  await writeFile(target, wanted);
  console.log(`wrote ${target}`);
}
