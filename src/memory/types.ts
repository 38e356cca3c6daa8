/**
 * Memory per principal (issue 62): what the agent learns about its user, kept across sessions, never crossing to
 * another principal. Each owner's memory is an append-only log of MemoryEvents on the record store (kept-memory.ts),
 * folded into MemoryState; erasing an owner removes its whole log from the store. The REST routes (/api/memory) and the
 * model's built-in tools (memory_save, memory_search, memory_forget, memory_profile) both go through MemoryService,
 * and every method names its owner: nothing here reads across owners except SHARED_OWNER, which every owner may read
 * and only admins write.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

/** The owner of the unnamed namespace (anonymous callers, shorthand keys): a principal whose `owner` is undefined. */
export const UNNAMED_OWNER = '@unnamed';
/** The shared scope: items every principal's agent may read, written by admins only. */
export const SHARED_OWNER = '@shared';

/** Whose memory a principal uses (`Principal.owner`, src/auth/principal.ts). */
export const memoryOwnerOf = (owner: string | undefined): string => owner ?? UNNAMED_OWNER;

/** Who wrote a memory fact, and whether it waits to be confirmed (`memory.afterToolOutput`). */
export const ProvenanceSchema = z.object({
  /** The session, turn and tool call that wrote it (absent when written over REST). */
  sessionId: z.string().optional(),
  turnId: z.string().optional(),
  callId: z.string().optional(),
  /** The model wrote it after a tool's output in the same turn (injected text may have asked for it). */
  afterToolOutput: z.literal(true).optional(),
  /** Written after a tool's output under `memory.afterToolOutput: unconfirmed`, and not confirmed yet. */
  unconfirmed: z.literal(true).optional(),
});
export type Provenance = z.infer<typeof ProvenanceSchema>;

export const MemoryItemSchema = z.object({
  id: z.string(),
  text: z.string(),
  tags: z.array(z.string()),
  ...ProvenanceSchema.shape,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type MemoryItem = z.infer<typeof MemoryItemSchema>;

/** One fact of an owner's memory log, oldest first; `at` is an ISO time. */
export const MemoryEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('itemSaved'), at: z.string(), item: MemoryItemSchema }),
  z.object({ type: z.literal('itemForgotten'), at: z.string(), id: z.string() }),
  /**
   * The working-memory profile replaced whole (bounded by `memory.profileMaxChars`); `unconfirmed`: kept as the
   * pending profile until confirmed, the system prompt keeps the confirmed one.
   */
  z.object({
    type: z.literal('profileSet'),
    at: z.string(),
    text: z.string(),
    ...ProvenanceSchema.shape,
  }),
  /** An unconfirmed item (or, without `id`, the pending profile) confirmed by the principal. */
  z.object({ type: z.literal('confirmed'), at: z.string(), id: z.string().optional() }),
  /** An item's embedding (semantic search), stored beside it; dropped with the item. */
  z.object({
    type: z.literal('itemEmbedded'),
    at: z.string(),
    id: z.string(),
    model: z.string(),
    vector: z.array(z.number()),
  }),
]);
export type MemoryEvent = z.infer<typeof MemoryEventSchema>;

/** How the store names `owner`'s records: the hex SHA-256 of its name, so no owner's name reaches an id or a key. */
export const ownerDigest = (owner: string): string => createHash('sha256').update(owner, 'utf8').digest('hex');

/** Where a model's memory write comes from (MemoryService `save`, `setProfile`). */
export interface WriteOrigin {
  sessionId?: string;
  turnId?: string;
  callId?: string;
  /** A tool's output was in the model's context when it made this call (earlier in the same turn). */
  afterToolOutput?: boolean;
}

/** A search hit: the item and its score (higher is better). */
export interface MemoryHit {
  item: MemoryItem;
  score: number;
  /** The item comes from the shared scope. */
  shared: boolean;
}

/** A principal's memory as exported (GET /api/memory/export). */
export interface MemoryExport {
  owner: string;
  exportedAt: string;
  profile: string;
  items: MemoryItem[];
}

/** What the REST routes and the model's tools use. Every call names its owner; none reads another's (SHARED_OWNER aside). */
export interface MemoryService {
  /** `owner`'s items, newest first. */
  list(owner: string): Promise<MemoryItem[]>;
  /** Up to `limit` of `owner`'s items newest first, from the one after `after` (from the newest when it is gone). */
  page(
    owner: string,
    page: { limit: number; after?: string | undefined },
  ): Promise<{ items: MemoryItem[]; more: boolean }>;
  /** `origin`: the model's call that writes it (absent over REST); after a tool's output it may be kept unconfirmed. */
  save(owner: string, input: { text: string; tags?: string[] }, origin?: WriteOrigin): Promise<MemoryItem>;
  /**
   * Confirms an unconfirmed item (`id`) or the pending profile (no `id`); confirming what waits for nothing changes
   * nothing. False only when `owner` has no item `id`.
   */
  confirm(owner: string, id?: string): Promise<boolean>;
  /** False when `owner` has no such item. */
  forget(owner: string, id: string): Promise<boolean>;
  /** Ranked full-text (and, when configured, semantic) search of `owner`'s items and the shared ones. */
  search(owner: string, query: string, limit?: number): Promise<MemoryHit[]>;
  /** The working-memory profile put into each new turn's system prompt ('' when none; the confirmed one). */
  profile(owner: string): Promise<string>;
  /** The profile waiting to be confirmed, with who wrote it (undefined when none). */
  pendingProfile(owner: string): Promise<({ text: string; at: string } & Provenance) | undefined>;
  setProfile(owner: string, text: string, origin?: WriteOrigin): Promise<void>;
  export(owner: string): Promise<MemoryExport>;
  /** Removes all of `owner`'s memory from the store and records who erased it (an audit record, not memory). */
  erase(owner: string, by: string): Promise<MemoryErased>;
}

/** What an erase leaves behind (not memory): who erased whose memory, when, and how much of it there was. */
export const MemoryAuditRecordSchema = z.object({
  type: z.literal('memoryErased'),
  at: z.string(),
  /** The principal that erased it (its name; `anonymous` without credentials). */
  by: z.string(),
  owner: z.string(),
  items: z.number().int(),
  profile: z.boolean(),
});
export type MemoryAuditRecord = z.infer<typeof MemoryAuditRecordSchema>;

/** The audit log of erasures, beside the memory logs on the record store (audit-log.ts); append-only. */
export interface MemoryAuditLog {
  /** Resolves once `record` is durable. */
  record(record: MemoryAuditRecord): Promise<void>;
  /** Every record, oldest first. */
  read(): Promise<MemoryAuditRecord[]>;
}

/** How much an erase removed. */
export interface MemoryErased {
  items: number;
  profile: boolean;
}

/**
 * Semantic search's port (`memory.embeddings`; the provider's embeddings API, src/memory/embeddings.ts): one vector
 * per text, by `model`. Rejects when the provider fails: memory then ranks by full text alone.
 */
export interface MemoryEmbedder {
  readonly model: string;
  embed(texts: readonly string[]): Promise<number[][]>;
}
