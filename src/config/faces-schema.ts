/** `a2a` and `agUi`: the agent served over A2A and over AG-UI. */
import { z } from 'zod';

const a2aSkillSchema = z.strictObject({
  id: z.string().min(1).max(64).describe("The skill's id."),
  name: z.string().min(1).max(128).describe('Its name for people.'),
  description: z.string().max(2000).default('').describe('What a caller may ask for under it.'),
  tags: z.array(z.string()).default([]).describe('Keywords.'),
  examples: z.array(z.string()).default([]).describe('Example requests.'),
});

export const a2aSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe('Serve the card, `/a2a` (JSON-RPC) and `/a2a/rest` (HTTP+JSON); `false` serves none of them.'),
  skills: z
    .array(a2aSkillSchema)
    .min(1)
    .default([
      {
        id: 'chat',
        name: 'Chat',
        description: 'Talk with the agent; it may use its tools.',
        tags: ['chat'],
        examples: [],
      },
    ])
    .describe('The skills the card lists: what a caller may ask the agent for.'),
});

/** Paths the AG-UI face may not take: the other faces' and the REST API's. */
const TAKEN_PATHS = /^\/(api|mcp|a2a|inspect)(\/|$)/;

export const agUiSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe('Serve the AG-UI endpoint and its capabilities (`false`: both are unknown routes).'),
  path: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'a path such as /ag-ui: segments of letters, digits, ".", "_", "~" or "-"')
    .refine((p) => !TAKEN_PATHS.test(p), 'the path belongs to another endpoint (/api, /mcp, /a2a, /inspect)')
    .default('/ag-ui')
    .describe('Where AG-UI clients run the agent (`POST`); its capabilities are at `<path>/capabilities`.'),
  clientTools: z
    .strictObject({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          "Offer a run's `tools` (tools the client runs) to the model (`false`: a run that declares any is refused).",
        ),
      principals: z
        .array(z.string().min(1))
        .optional()
        .describe(
          'Only these principals (key names, `jwt:<subject>`, `anonymous`) may declare client tools; absent: every principal that may run.',
        ),
    })
    .prefault({})
    .describe(
      "Tools the client runs (AG-UI's `RunAgentInput.tools`, and the `tools` of a message over REST or WebSocket): who may declare them.",
    ),
});
export type AgUiConfig = z.output<typeof agUiSchema>;
