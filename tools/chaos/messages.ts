/**
 * The messages of a chaos run's load: each carries a unique tag (`<seed>-<n>`) and, drawn from the PRNG, simulator
 * directives (tools/simulator/README.md) that make its turn plain, slow to stream, or call the tools of
 * mark-server.ts: the non-idempotent `mark` (its key is the tag), `mark_ask` (waits for the approval bot), the
 * idempotent `stamp`, or `mark` and `stamp` in one step. A tool takes 0 to 1.5 s, and half the tool-calling model
 * steps wait 0.2 to 1.5 s before they answer, so model steps and calls are in flight when faults come.
 */
import type { Prng } from './prng.ts';

export const SHAPES = { plain: 3, stream: 2, mark: 4, markAsk: 2, stamp: 2, both: 2 } as const;
export type Shape = keyof typeof SHAPES;

export function messageText(tag: string, shape: Shape, prng: Prng): string {
  const args = (key: string) => JSON.stringify({ key, ms: prng.int(0, 1500) });
  // Half the tool-calling steps take 0.2–1.5 s before the call streams: a pause then hits the model step.
  const slow = () => (prng.chance(0.5) ? ` [[ttft:${prng.int(200, 1500)}]]` : '');
  switch (shape) {
    case 'plain':
      return `hello ${tag}`;
    case 'stream':
      return `stream ${tag} [[len:${prng.int(10, 40)}]] [[rate:${prng.int(20, 60)}]]`;
    case 'mark':
      return `mark ${tag} [[tool:mark ${args(tag)}]]${slow()}`;
    case 'markAsk':
      return `ask ${tag} [[tool:mark_ask ${args(tag)}]]${slow()}`;
    case 'stamp':
      return `stamp ${tag} [[tool:stamp ${args(tag)}]]`;
    case 'both':
      return `both ${tag} [[tool:mark ${args(tag)}]] [[tool:stamp ${args(`${tag}-s`)}]]${slow()}`;
  }
}
