/**
 * `/api/memory`: a principal's memory as people see it (docs/memory.md): its items and profile, search, save,
 * forget, export and erase. Scope `chat`; each call reaches the caller's own memory, or (admin only, `?owner=`, the
 * rule of the session routes) another owner's: `?owner=@shared` is how an admin writes the shared scope, `?owner=`
 * (empty) the memory of no principal. With memory off (no `memory:` in the agent file) every route answers
 * 503 SERVICE_UNAVAILABLE, `details.reason: "memory_off"`.
 */
import { z } from 'zod';
import { checkOwnerNamed, type Principal } from '../../auth/index.ts';
import type { Clock } from '../../clock.ts';
import { AppError } from '../../errors/index.ts';
import {
  createReply,
  defineRoute,
  ownerSchema,
  parseInput,
  withTimestamp,
  type Route,
} from '../../http/feature-mount.ts';
import {
  MemoryItemSchema,
  memoryOwnerOf,
  ProvenanceSchema,
  SHARED_OWNER,
  UNNAMED_OWNER,
  type MemoryService,
} from '../index.ts';

const PendingProfileSchema = z.object({ text: z.string(), at: z.string(), ...ProvenanceSchema.shape });

/** A search hit of /api/memory (src/memory/types.ts). */
const memoryHit = z.object({
  item: MemoryItemSchema,
  score: z.number().describe('Higher is better'),
  shared: z.boolean().describe(`From the shared scope (${SHARED_OWNER})`),
});
/** A memory route's answer: whose memory it reached, and what. */
const ofMemory = <S extends z.ZodRawShape>(shape: S) =>
  withTimestamp({ success: z.literal(true), owner: z.string().describe('Whose memory'), ...shape });

/** The success bodies of these routes (the OpenAPI document publishes them). */
export const RESPONSES = {
  memory: ofMemory({
    profile: z.string().describe('The working-memory profile ("" when none): the confirmed one'),
    pendingProfile: PendingProfileSchema.optional().describe(
      'A profile the model wrote after a tool output, waiting to be confirmed (`memory.afterToolOutput`)',
    ),
    items: z.array(MemoryItemSchema).optional().describe('Without `q`: a page of items, newest first'),
    nextAfter: z.string().optional().describe('Without `q`: more items follow; pass it as `after` for the next page'),
    hits: z.array(memoryHit).optional().describe('With `q`: the best matches, best first'),
  }),
  memoryConfirmed: ofMemory({ confirmed: z.string().describe('The item id, or "profile"') }),
  memoryItem: ofMemory({ item: MemoryItemSchema }),
  memoryProfile: ofMemory({ profile: z.string() }),
  memoryForgotten: ofMemory({ id: z.string(), deleted: z.literal(true) }),
  memoryErased: ofMemory({
    erased: z.object({ items: z.number().int(), profile: z.boolean() }).describe('What was removed from the store'),
  }),
  /** The download of `GET /api/memory/export` (MemoryExport): no envelope. */
  memoryExport: z.object({
    owner: z.string(),
    exportedAt: z.string(),
    profile: z.string(),
    items: z.array(MemoryItemSchema),
  }),
};

export interface MemoryRoutesDeps {
  clock: Clock;
  /** Absent: memory is off. */
  memory?: MemoryService | undefined;
}

export const ownerQuery = z.object({
  owner: ownerSchema
    .regex(/^[^\p{Cc}]*$/u, 'must not hold control characters')
    .optional()
    .describe(
      `Admin only: whose memory ("${SHARED_OWNER}": the shared scope every principal's agent reads; "": no principal's); default: the caller's own`,
    ),
});
export const listQuery = ownerQuery.extend({
  q: z.string().min(1).max(1000).optional().describe('Search: the ranked items (own and shared) matching these words'),
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('Items per page (without `q`)'),
  after: z.string().min(1).max(200).optional().describe('The `nextAfter` of the previous page'),
});
export const confirmBody = z.strictObject({
  id: z.string().min(1).max(200).optional().describe('The unconfirmed item to confirm; absent: the pending profile'),
});
export const itemBody = z.strictObject({
  text: z.string().min(1).describe('The fact to remember'),
  tags: z.array(z.string()).optional().describe('Words to find it by'),
});
export const profileBody = z.strictObject({
  text: z.string().describe('The whole profile (working memory; "" clears it), at most `memory.profileMaxChars`'),
});
/** Whose memory a call reaches: the caller's, or (admin only) the one `?owner=` names. */
function ownerOf(principal: Principal, named: string | undefined): string {
  const owner = named === undefined ? undefined : named === '' ? UNNAMED_OWNER : named;
  const own = memoryOwnerOf(principal.owner);
  checkOwnerNamed(principal, owner, own, 'memory');
  return owner ?? own;
}

const notFound = (id: string | undefined) => new AppError('MEMORY_ITEM_NOT_FOUND', `No memory item "${id}"`, { id });

const idParams = (params: Record<string, string>) => ({
  id: parseInput(z.string().min(1).max(200), params.id, 'memory item id'),
});

/**
 * `GET /api/memory`'s answer: the profile (and the pending one), then a page of items newest first from the one after
 * `after` (from the first when it is gone), or the hits of `q`.
 */
async function listed(memory: MemoryService, owner: string, query: z.output<typeof listQuery>) {
  const profile = await memory.profile(owner);
  const pending = await memory.pendingProfile(owner);
  const head = { success: true as const, owner, profile, ...(pending && { pendingProfile: pending }) };
  if (query.q !== undefined) return { ...head, hits: await memory.search(owner, query.q) };
  const { items, more } = await memory.page(owner, { limit: query.limit, after: query.after });
  return { ...head, items, ...(more && items.length > 0 && { nextAfter: items.at(-1)?.id }) };
}

export function memoryRoutes(deps: MemoryRoutesDeps): Route[] {
  const reply = createReply(deps.clock);
  const memory = (): MemoryService => {
    if (!deps.memory)
      throw new AppError('SERVICE_UNAVAILABLE', 'Memory is off: add `memory:` to the agent file (docs/memory.md)', {
        reason: 'memory_off',
      });
    return deps.memory;
  };
  const errors = ['FORBIDDEN', 'INVALID_REQUEST', 'SERVICE_UNAVAILABLE'] as const;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/memory',
      summary: "The caller's memory: its items, newest first, and its profile; `?q=` searches (own and shared items)",
      query: listQuery,
      response: RESPONSES.memory,
      errors: [...errors],
      handler: async ({ query, principal }) => reply(await listed(memory(), ownerOf(principal, query.owner), query)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/memory/confirm',
      summary:
        'Confirm an item (`id`), or the pending profile, that the model wrote after a tool output (`memory.afterToolOutput`); what waits for nothing stays as it is',
      query: ownerQuery,
      body: confirmBody,
      example: {},
      response: RESPONSES.memoryConfirmed,
      errors: ['MEMORY_ITEM_NOT_FOUND', ...errors],
      async handler({ query, body, principal }) {
        const owner = ownerOf(principal, query.owner);
        if (!(await memory().confirm(owner, body.id))) throw notFound(body.id); // only an unknown item: what waits for nothing is confirmed as it is
        return reply({ success: true as const, owner, confirmed: body.id ?? 'profile' });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/memory',
      summary: "Save an item to the caller's memory",
      created: true,
      query: ownerQuery,
      body: itemBody,
      example: { text: 'Prefers answers in French', tags: ['language'] },
      response: RESPONSES.memoryItem,
      errors: ['MISSING_FIELD', ...errors],
      async handler({ query, body, principal }) {
        const owner = ownerOf(principal, query.owner);
        const item = await memory().save(owner, { text: body.text, ...(body.tags && { tags: body.tags }) });
        return { status: 201, ...reply({ success: true as const, owner, item }) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/memory/profile',
      summary: "Replace the caller's profile (working memory, put into each new turn's system prompt)",
      query: ownerQuery,
      body: profileBody,
      example: { text: 'Alex, a baker in Lyon; prefers short answers' },
      response: RESPONSES.memoryProfile,
      errors: ['MISSING_FIELD', ...errors],
      async handler({ query, body, principal }) {
        const owner = ownerOf(principal, query.owner);
        await memory().setProfile(owner, body.text);
        return reply({ success: true as const, owner, profile: body.text });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/memory/export',
      summary: "The caller's memory as a JSON download (profile and items)",
      query: ownerQuery,
      response: RESPONSES.memoryExport,
      errors: [...errors],
      async handler({ query, principal }) {
        const exported = await memory().export(ownerOf(principal, query.owner));
        const headers = {
          'Content-Disposition': 'attachment; filename="agentd-memory.json"',
          'Cache-Control': 'no-store',
        };
        return { headers, body: exported };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/memory/:id',
      summary: "Forget one item of the caller's memory",
      params: idParams,
      query: ownerQuery,
      response: RESPONSES.memoryForgotten,
      errors: ['MEMORY_ITEM_NOT_FOUND', ...errors],
      async handler({ params, query, principal }) {
        const owner = ownerOf(principal, query.owner);
        if (!(await memory().forget(owner, params.id))) throw notFound(params.id);
        return reply({ success: true as const, owner, id: params.id, deleted: true as const });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/memory',
      summary: "Erase the caller's whole memory from the store (an audit record says who, whose and when)",
      query: ownerQuery,
      response: RESPONSES.memoryErased,
      errors: [...errors],
      async handler({ query, principal }) {
        const owner = ownerOf(principal, query.owner);
        return reply({ success: true as const, owner, erased: await memory().erase(owner, principal.name) });
      },
    }),
  ];
}
