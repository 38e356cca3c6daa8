import { AppError } from '../errors/index.ts';
import type { HttpMethod, Route } from './route.ts';

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

export type Lookup = { match: RouteMatch } | { match: undefined; pathKnown: boolean };

function decodeSegment(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new AppError('INVALID_REQUEST', 'Malformed URL path', { issue: `bad escape in "${part}"` });
  }
}

interface Compiled {
  route: Route;
  segments: string[];
}

/** Exact segments: a `:param` matches one non-empty segment. Static routes by a map lookup, the others by a scan. */
export function createRouter(routes: Route[]) {
  const statics = new Map<string, Route>();
  const dynamic: Compiled[] = [];
  for (const route of routes) {
    if (route.path.includes('/:')) dynamic.push({ route, segments: route.path.split('/') });
    else statics.set(`${route.method} ${route.path}`, route);
  }
  const staticPaths = new Set(routes.filter((r) => !r.path.includes('/:')).map((r) => r.path));

  const matchDynamic = (method: HttpMethod | undefined, parts: string[]): RouteMatch | undefined => {
    outer: for (const { route, segments } of dynamic) {
      if ((method && route.method !== method) || segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i]!;
        const part = parts[i]!;
        if (seg.startsWith(':')) {
          if (part === '') continue outer;
          params[seg.slice(1)] = decodeSegment(part);
        } else if (seg !== part) continue outer;
      }
      return { route, params };
    }
    return undefined;
  };

  return {
    /** When none matches, whether the path exists under another method; throws on a malformed escape. */
    lookup(method: string, path: string): Lookup {
      const m = method as HttpMethod;
      const found = statics.get(`${m} ${path}`);
      if (found) return { match: { route: found, params: {} } };
      const parts = path.split('/');
      const match = matchDynamic(m, parts);
      if (match) return { match };
      return { match: undefined, pathKnown: staticPaths.has(path) || matchDynamic(undefined, parts) !== undefined };
    },
  };
}
