/** An owner's memory as its log folds into it: items in log order, the profile, and the items' embeddings. */
import type { MemoryEvent, MemoryItem } from './types.ts';

export interface MemoryState {
  /** By id, in the order they were first saved (a re-save keeps its place). */
  items: Map<string, MemoryItem>;
  /** The working-memory profile ('' when none). */
  profile: string;
  /** The embedding of each item that has one (dropped with its item). */
  vectors: Map<string, { model: string; vector: number[] }>;
}

export const emptyMemory = (): MemoryState => ({ items: new Map(), profile: '', vectors: new Map() });

/** Applies one event to `state` (in place) and returns it. */
export function evolveMemory(state: MemoryState, event: MemoryEvent): MemoryState {
  switch (event.type) {
    case 'itemSaved':
      state.items.set(event.item.id, event.item);
      state.vectors.delete(event.item.id); // its text may have changed: an older vector no longer describes it
      break;
    case 'itemForgotten':
      state.items.delete(event.id);
      state.vectors.delete(event.id);
      break;
    case 'profileSet':
      state.profile = event.text;
      break;
    case 'itemEmbedded':
      if (state.items.has(event.id)) state.vectors.set(event.id, { model: event.model, vector: event.vector });
      break;
  }
  return state;
}

export const foldMemory = (events: readonly MemoryEvent[]): MemoryState => events.reduce(evolveMemory, emptyMemory());

/** Items newest first (the last saved first). */
export const newestFirst = (state: MemoryState): MemoryItem[] => [...state.items.values()].reverse();
