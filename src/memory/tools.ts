/**
 * The model's built-in memory tools (issue 62): `memory_save`, `memory_search`, `memory_forget`, `memory_profile`
 * (their names, and whether each is offered, from `memory.tools`). The agent offers them beside the tool servers'
 * (src/agent/tool-port.ts) under the server id MEMORY_SERVER_ID, so the tool policy and approvals treat them like
 * any tool: a rule `{ server: agentd:memory, tool: memory_forget, action: ask }` asks before an item is forgotten.
 *
 * Contracts:
 * - Every call acts on the owner it is given (the session's principal's, memoryOwnerOf), never on another; search
 *   also reads the shared scope (MemoryService.search), which these tools never write — not even for a session that
 *   runs as `@shared` (its save, forget and profile fail).
 * - A write records where it was made (`MemoryCallContext`); one made while a tool's output is in the model's context
 *   (any turn's, until compaction leaves it out) may be kept unconfirmed (`memory.afterToolOutput`), and the model
 *   reads that it waits for the user.
 * - A call never throws: bad arguments or a failing store are a failed outcome whose text the model reads.
 * - `memory_profile` replaces the working-memory profile whole; a text over `profileMaxChars` is refused by the
 *   service (the model reads the bound and writes a shorter one), never cut silently.
 */
import { z } from 'zod';
import { isAppError } from '../errors/index.ts';
import type { Logger } from '../log/index.ts';
import { SHARED_OWNER, type MemoryService, type WriteOrigin } from './types.ts';

/** The tools' server id, `agentd:memory`: no tool server can take it (src/config/tool-servers-schema.ts). */
export { MEMORY_SERVER_ID } from '../config/schema.ts';

export type MemoryToolKind = 'save' | 'search' | 'forget' | 'profile';

/** `memory.tools`: each kind's model-visible name, or false to leave it out. */
export type MemoryToolNames = Record<MemoryToolKind, string | false>;

export interface MemoryToolsSettings {
  tools: MemoryToolNames;
  searchLimit: number;
  profileMaxChars: number;
}

/** A memory tool as the model is offered it (`toolName` equals `name`: the name the tool policy's rules use). */
export interface MemoryToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** A second call does no harm (search reads; forget and profile set a state). */
  rerunSafe: boolean;
}

/** Who a call acts for, and where it was made (kept on what it writes: MemoryService's `WriteOrigin`). */
export interface MemoryCallContext extends WriteOrigin {
  owner: string;
}

export interface MemoryToolResult {
  success: boolean;
  /** What the model reads (the caller caps it at `toolResultMaxBytes`). */
  text: string;
  /** Structured, for the `toolResult` event. */
  result: unknown;
}

const str = (description: string) => ({ type: 'string', minLength: 1, description });
const object = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const ARGS = {
  save: z.strictObject({ text: z.string().trim().min(1), tags: z.array(z.string()).optional() }),
  search: z.strictObject({ query: z.string().trim().min(1), limit: z.number().int().min(1).max(50).optional() }),
  forget: z.strictObject({ id: z.string().min(1) }),
  profile: z.strictObject({ text: z.string() }),
} as const;

function describe(kind: MemoryToolKind, settings: MemoryToolsSettings): Omit<MemoryToolDefinition, 'name'> {
  switch (kind) {
    case 'save':
      return {
        description:
          'Remember a fact about the user or their work for later conversations (one fact per call). Returns its id.',
        parameters: object(
          { text: str('The fact, self-contained.'), tags: { type: 'array', items: { type: 'string' } } },
          ['text'],
        ),
        rerunSafe: false,
      };
    case 'search':
      return {
        description: `Search what you remember about the user (best matches first, at most ${settings.searchLimit} unless limit says).`,
        parameters: object({ query: str('Words to look for.'), limit: { type: 'integer', minimum: 1, maximum: 50 } }, [
          'query',
        ]),
        rerunSafe: true,
      };
    case 'forget':
      return {
        description: 'Forget a remembered item by its id (from memory_search or memory_save).',
        parameters: object({ id: str("The item's id.") }, ['id']),
        rerunSafe: true,
      };
    case 'profile':
      return {
        description: `Replace your working memory of the user (shown to you at the start of every turn) with this text, at most ${settings.profileMaxChars} characters. Keep what still holds; '' clears it.`,
        parameters: object({ text: { type: 'string', description: 'The whole new profile.' } }, ['text']),
        rerunSafe: true,
      };
  }
}

const KINDS: readonly MemoryToolKind[] = ['save', 'search', 'forget', 'profile'];

/** Model turns never write the shared scope (a schedule or key running as `@shared`): admins do, over REST. */
const SHARED_READ_ONLY = 'the shared memory is written by admins over REST only';

const failed = (reason: string): MemoryToolResult => ({
  success: false,
  text: `Error: ${reason}`,
  result: { error: reason },
});

/** The memory tools of `settings` over `service`: their definitions, and `call`. */
export function createMemoryTools(service: MemoryService, settings: MemoryToolsSettings, log: Logger) {
  const byName = new Map<string, MemoryToolKind>();
  const definitions: MemoryToolDefinition[] = [];
  for (const kind of KINDS) {
    const name = settings.tools[kind];
    if (name === false) continue;
    byName.set(name, kind);
    definitions.push({ name, ...describe(kind, settings) });
  }

  const run = async (kind: MemoryToolKind, args: unknown, ctx: MemoryCallContext): Promise<MemoryToolResult> => {
    const { owner, ...origin } = ctx;
    if (kind !== 'search' && owner === SHARED_OWNER) return failed(SHARED_READ_ONLY);
    switch (kind) {
      case 'save': {
        const { text, tags } = ARGS.save.parse(args);
        const item = await service.save(owner, { text, ...(tags && { tags }) }, origin);
        const unconfirmed = item.unconfirmed ? ' It waits for the user to confirm it.' : '';
        return {
          success: true,
          text: `Saved as ${item.id}.${unconfirmed}`,
          result: { id: item.id, ...(item.unconfirmed && { unconfirmed: true }) },
        };
      }
      case 'search': {
        const { query, limit } = ARGS.search.parse(args);
        const hits = await service.search(owner, query, limit ?? settings.searchLimit);
        const lines = hits.map(
          ({ item, shared }) =>
            `- ${item.id}${shared ? ' (shared)' : ''}${item.unconfirmed ? ' (unconfirmed)' : ''}: ${item.text}${item.tags.length > 0 ? ` [${item.tags.join(', ')}]` : ''}`,
        );
        const text = hits.length === 0 ? 'Nothing remembered matches.' : lines.join('\n');
        const items = hits.map(({ item, score, shared }) => ({
          id: item.id,
          text: item.text,
          tags: item.tags,
          score,
          shared,
          ...(item.unconfirmed && { unconfirmed: true }),
        }));
        return { success: true, text, result: { items } };
      }
      case 'forget': {
        const { id } = ARGS.forget.parse(args);
        const gone = await service.forget(owner, id);
        return gone
          ? { success: true, text: `Forgot ${id}.`, result: { id, forgotten: true } }
          : failed(`no remembered item ${id}`);
      }
      case 'profile': {
        const { text } = ARGS.profile.parse(args);
        await service.setProfile(owner, text, origin);
        const pending = origin.afterToolOutput && (await service.pendingProfile(owner))?.text === text;
        return pending
          ? {
              success: true,
              text: 'Kept; it waits for the user to confirm it.',
              result: { chars: text.length, unconfirmed: true },
            }
          : { success: true, text: 'Working memory updated.', result: { chars: text.length } };
      }
    }
  };

  return {
    definitions,
    /** The tools whose answers are agentd's own words, not stored text (all but search): no tool's output to a write. */
    ownWords: new Set(definitions.map((d) => d.name).filter((name) => byName.get(name) !== 'search')),
    /** Runs the memory tool called `name` for `ctx.owner` (never rejects). */
    call(name: string, args: unknown, ctx: MemoryCallContext): Promise<MemoryToolResult> {
      const kind = byName.get(name);
      if (kind === undefined) return Promise.resolve(failed(`unknown tool "${name}"`));
      return run(kind, args, ctx).catch((err: unknown) => {
        const reason =
          err instanceof z.ZodError
            ? `invalid arguments for tool "${name}": ${err.issues.map((i) => `/${i.path.join('/')} ${i.message}`).join('; ')}`
            : isAppError(err) && err.code === 'INVALID_REQUEST'
              ? err.message // the service's bounds (an item's length, the profile's), worded for the model
              : undefined;
        // The store's own words (paths, hosts) stay in the log: the model reads only that memory failed.
        if (reason === undefined) log.warn({ err, tool: name }, 'a memory tool call failed');
        return failed(reason ?? 'memory is unavailable right now');
      });
    },
  };
}

export type MemoryTools = ReturnType<typeof createMemoryTools>;
