/**
 * createApp's features (`Feature`, src/http/feature-mount.ts): each listed once and built once, after the features it
 * needs, which it is handed by name (their `port`s).
 * Contracts:
 * - Every feature is given the same `given` (createApp's ports); its type is what all the listed features read of it.
 * - A feature is built after every feature it needs; otherwise in the order listed.
 * - The mounts come back in the order the features are listed (their routes' order in the route table and the OpenAPI
 *   document, and their open, start and stop order), whatever order they were built in.
 * - A name listed twice, a need that is not listed, or needs that go round in a circle throw INTERNAL_ERROR naming
 *   them, before any feature is built.
 */
import { AppError } from '../errors/index.ts';
import type { Built, Feature, FeatureMount } from '../http/feature-mount.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any feature, whatever it is given and needs
export type AnyFeature = Feature<string, any, any, any>;
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** What the listed features are given: every one's `given` at once. */
export type GivenTo<Fs extends readonly AnyFeature[]> = UnionToIntersection<Parameters<Fs[number]['build']>[0]>;
/** Each listed feature's port, by its name. */
export type PortsOf<Fs extends readonly AnyFeature[]> = {
  [F in Fs[number] as F['name']]: F extends Feature<string, never, infer Port, never> ? Port : never;
};

/** `Fs`, each feature's needs met by the ports of the listed (a feature whose are not is `never`: the compiler names it). */
type NeedsMet<Fs extends readonly AnyFeature[]> = {
  [I in keyof Fs]: PortsOf<Fs> extends Parameters<Fs[I]['build']>[1] ? Fs[I] : never;
};

interface Named {
  readonly name: string;
  readonly needs?: readonly string[];
}

/** `features` in the order they are built in: each after those it needs, otherwise as listed. */
export function buildOrder<F extends Named>(features: readonly F[]): F[] {
  const byName = new Map<string, F>();
  for (const f of features) {
    if (byName.has(f.name)) throw new AppError('INTERNAL_ERROR', `feature "${f.name}" is listed twice`);
    byName.set(f.name, f);
  }
  const order: F[] = [];
  const visit = (f: F, path: readonly string[]): void => {
    if (order.includes(f)) return;
    if (path.includes(f.name)) {
      const circle = [...path.slice(path.indexOf(f.name)), f.name].join(' → ');
      throw new AppError('INTERNAL_ERROR', `features need each other in a circle: ${circle}`, { circle });
    }
    for (const need of f.needs ?? []) {
      const needed = byName.get(need);
      if (!needed)
        throw new AppError('INTERNAL_ERROR', `feature "${f.name}" needs "${need}", which is not listed`, {
          feature: f.name,
          need,
        });
      visit(needed, [...path, f.name]);
    }
    order.push(f);
  };
  for (const f of features) visit(f, []);
  return order;
}

/** Builds `features` (buildOrder's order): their mounts, in the order listed, and their ports by name. */
export function buildFeatures<const Fs extends readonly AnyFeature[]>(
  features: Fs & NeedsMet<Fs>,
  given: GivenTo<Fs>,
): { mounts: FeatureMount[]; ports: PortsOf<Fs> } {
  const built = new Map<string, Built<unknown>>();
  const portOf = (name: string): unknown => built.get(name)?.port;
  for (const f of buildOrder(features)) {
    const needed = Object.fromEntries((f.needs ?? []).map((name) => [name, portOf(name)]));
    built.set(f.name, f.build(given, needed));
  }
  return {
    mounts: features.flatMap((f) => built.get(f.name)?.mount ?? []),
    ports: Object.fromEntries(features.map((f) => [f.name, portOf(f.name)])) as PortsOf<Fs>,
  };
}
