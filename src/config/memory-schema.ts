/**
 * `memory`: what the agent learns about each principal, kept across sessions and never crossing to another
 * (src/memory, docs/memory.md). Absent: memory is off, no tool is offered and a turn costs what it costs without it.
 */
import { z } from 'zod';
import { positiveInt } from './numbers.ts';

/** A built-in tool's name as the model sees it (the model's name rules), or `false` to not offer the tool. */
const toolSetting = (name: string, what: string) =>
  z
    .union([z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, `_` or `-`'), z.literal(false)])
    .default(name)
    .describe(`The tool that ${what}: its name as the model sees it, or \`false\` to not offer it.`);

export const memorySchema = z
  .strictObject({
    profileMaxChars: positiveInt(2000).describe(
      "The working memory's bound: a principal's profile (put into each new turn's system prompt) has at most this many characters.",
    ),
    searchLimit: positiveInt(5).describe("Items a search answers at most (the model's tool and `GET /api/memory?q=`)."),
    maxItems: positiveInt(1000).describe(
      'Items a principal keeps at most: a save past it is refused (forget some first). The shared scope too.',
    ),
    maxChars: positiveInt(1_000_000).describe(
      "Characters of item text a principal keeps at most (every item's text summed): a save past it is refused.",
    ),
    afterToolOutput: z
      .enum(['unconfirmed', 'allow'])
      .default('unconfirmed')
      .describe(
        "A memory write by the model while a tool's output is in its context, of this turn or an earlier one until compaction leaves it out (it may carry injected instructions): `unconfirmed` (default) keeps it marked so, out of the system prompt and marked in searches until the principal confirms it (`POST /api/memory/confirm`); `allow` keeps it as any write. Its provenance is recorded either way.",
      ),
    tools: z
      .strictObject({
        save: toolSetting('memory_save', 'saves an item'),
        search: toolSetting('memory_search', "searches the principal's items and the shared ones"),
        forget: toolSetting('memory_forget', 'forgets an item'),
        profile: toolSetting('memory_profile', "replaces the principal's profile (working memory)"),
      })
      .prefault({})
      .refine((t) => {
        const names = Object.values(t).filter((name) => name !== false);
        return new Set(names).size === names.length;
      }, 'each memory tool needs a name of its own')
      .describe("The model's built-in memory tools; they pass the tool policy and approvals like any tool."),
    embeddings: z
      .strictObject({
        model: z
          .string()
          .min(1)
          .describe("The embeddings model of the llm provider's embeddings API, e.g. `text-embedding-3-small`."),
      })
      .optional()
      .describe(
        'Semantic search beside full text (hybrid ranking); full text alone when embeddings fail. Default: off.',
      ),
  })
  .optional()
  .describe(
    "Memory per principal (docs/memory.md): items and a profile the agent keeps across sessions, stored on the sessions' medium. Default: off.",
  );

export type MemoryConfig = z.output<typeof memorySchema>;
