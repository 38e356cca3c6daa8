import { z } from 'zod';
import { approvalDecision, transientNameOf } from '../agent/index.ts';
import { elicitationAction } from '../conversation/records.ts';
import { MAX_OWNER_LENGTH, sessionIdSchema } from '../session-id.ts';
import type { McpEvents } from '../tools/index.ts';
import type { FrontEvents } from './front-bus.ts';
import { attachFields } from './attach.ts';
import { declaredToolsField } from './client-tools.ts';

/** The MCP bus events that become `{ event, data }` WebSocket frames, with their frame names (docs/api.md). */
export const MCP_EVENT_FRAMES = {
  'mcp.serverStatus': 'mcpServerStatus',
  'mcp.toolsChanged': 'toolsChanged',
  'mcp.toolProgress': 'toolProgress',
  'mcp.resourceUpdated': 'resourceUpdated',
  'mcp.listChanged': 'mcpListChanged',
  'mcp.serverLog': 'mcpServerLog',
} as const satisfies { [K in keyof McpEvents]: string };

/**
 * The frame name of a bus event other than a stored fact (whose frame is its `toFrame`): a transient agent event
 * `agent.X` the frame `X` (src/agent/frames.ts `transientNameOf`), an MCP event the one its row above names.
 */
export const eventFrameOf = (name: keyof FrontEvents): string =>
  transientNameOf(name) ?? MCP_EVENT_FRAMES[name as keyof McpEvents];

/** Both fields are optional in the spec: `base64` is then reported missing, `mimeType` sniffed. */
export const imageDataSchema = z.strictObject({
  base64: z.string().optional(),
  mimeType: z.string().optional(),
});

/** A session owner's name as an admin names it (`""` for the sessions of no principal). */
export const ownerSchema = z.string().max(MAX_OWNER_LENGTH);

/** The client frames' schemas by `type`; ClientFrameHandlers makes the compiler ask for each one's handler. */
export const CLIENT_FRAMES = {
  message: z.object({
    type: z.literal('message'),
    content: z.string(),
    sessionId: sessionIdSchema.optional(),
    imageData: imageDataSchema.optional(),
    ...attachFields,
    ...declaredToolsField,
  }),
  reset: z.object({ type: z.literal('reset'), sessionId: sessionIdSchema.optional() }),
  subscribe: z.object({
    type: z.literal('subscribe'),
    sessionId: sessionIdSchema,
    since: z.number().int().nonnegative().optional(),
    /** Admin only: the principal whose session it is (src/auth/ownership.ts). */
    owner: ownerSchema.optional(),
  }),
  unsubscribe: z.object({ type: z.literal('unsubscribe'), sessionId: sessionIdSchema, owner: ownerSchema.optional() }),
  cancel: z.object({ type: z.literal('cancel'), sessionId: sessionIdSchema.optional() }),
  /** Compacts the session's history now (after its running turn); the `contextCompacted` frame tells when it is done. */
  compact: z.object({ type: z.literal('compact'), sessionId: sessionIdSchema.optional() }),
  /** Answers a tool call waiting for approval of one's own session (needs the admin key when only the shorthand keys are set). */
  approval: z.object({
    type: z.literal('approval'),
    sessionId: sessionIdSchema.optional(),
    callId: z.string().min(1).max(200),
    decision: approvalDecision,
    reason: z.string().max(2000).optional(),
    /** A budget question only: approve and raise the budget's limit for its period to this amount. */
    raiseTo: z.number().positive().finite().optional(),
  }),
  /** Answers a tool server's question (elicitation) of one's own session; `content` is checked against its schema. */
  elicitation: z.object({
    type: z.literal('elicitation'),
    sessionId: sessionIdSchema.optional(),
    id: z.string().min(1).max(200),
    action: elicitationAction,
    content: z.record(z.string(), z.unknown()).optional(),
  }),
  ping: z.object({ type: z.literal('ping') }),
} as const;

export type ClientFrameType = keyof typeof CLIENT_FRAMES;
export type ClientFrame<T extends ClientFrameType = ClientFrameType> = z.output<(typeof CLIENT_FRAMES)[T]>;

export type ClientFrameHandlers<C> = {
  [T in ClientFrameType]: (context: C, frame: ClientFrame<T>) => Promise<void> | void;
};

export const isClientFrameType = (t: unknown): t is ClientFrameType =>
  typeof t === 'string' && Object.hasOwn(CLIENT_FRAMES, t);

/**
 * The first frame of every connection at `/`: the store whose logs the `seq`s number (EventStore.storeId). A
 * client that sees another identity than before drops what it holds and replays from `since: 0`.
 */
export const helloFrame = (data: { storeId: string }) => ({ event: 'hello', data }) as const;

/**
 * Sent to every open connection at `/` when the store lost data (src/app/store-loss.ts): from now on seqs number the
 * logs of `storeId`, not of `previousStoreId`. A client drops the seqs it holds and replays from `since: 0`, as a
 * `hello` with another identity tells it to.
 */
export const storeChangedFrame = (data: { storeId: string; previousStoreId: string }) =>
  ({ event: 'storeChanged', data }) as const;

/** Serializes a frame once; the same string is published to every subscriber. */
export const frame = (event: string, data: unknown): string => JSON.stringify({ event, data });
