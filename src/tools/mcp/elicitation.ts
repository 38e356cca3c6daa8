/**
 * `elicitation/create` from a tool server during one of its calls, routed to the call's ElicitTarget (server-asks.ts).
 * - Form and URL modes are declared unless `mcpServers.<name>.elicitation` turns them off (the SDK then refuses that
 *   mode); with both off there is no handler.
 * - A request goes to the target of the oldest call in flight on the connection when all calls in flight belong to one
 *   session; with none, a call without a target (`…/execute`), or several sessions, it is declined and logged.
 * - The target gets the call's deadline and a signal that aborts when the call ends or the server cancels.
 * - Either era: a 2026-07-28 server's `input_required` answer reaches the same handler through the SDK.
 * - An accepted form is filled with the schema's `default` for each field left out (SEP-1034); given fields stay.
 */
import type { Client, ClientCapabilities, ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../../config/schema.ts';
import type { Logger } from '../../log/index.ts';
import type { ElicitationAsk, ElicitationContent, ElicitTarget } from '../server-asks.ts';

type ElicitationConfig = Pick<McpServerConfig, 'elicitation'>;

export function elicitationModes(config: ElicitationConfig): { form: boolean; url: boolean } {
  const e = config.elicitation ?? true;
  if (typeof e === 'boolean') return { form: e, url: e };
  return { form: e.form !== false, url: e.url !== false };
}

export function elicitationCapability(config: ElicitationConfig): Pick<ClientCapabilities, 'elicitation'> {
  const { form, url } = elicitationModes(config);
  if (!form && !url) return {};
  return { elicitation: { ...(form && { form: {} }), ...(url && { url: {} }) } };
}

/** The tool calls of one connection in flight, oldest first: what an elicitation is attributed to. */
export function createInFlightCalls() {
  const calls = new Set<{ target: ElicitTarget | undefined; deadline: number; ended: AbortController }>();
  return {
    /** Registers a call; the returned function ends it (aborting its questions still open). */
    begin(target: ElicitTarget | undefined, deadline: number): () => void {
      const call = { target, deadline, ended: new AbortController() };
      calls.add(call);
      return () => {
        calls.delete(call);
        call.ended.abort(new Error('the tool call ended'));
      };
    },
    /** The call a question belongs to, or why none does. */
    route() {
      const all = [...calls];
      const first = all[0];
      if (!first) return 'no tool call of this server is in flight';
      if (new Set(all.map((c) => c.target?.sessionId)).size > 1) return 'tool calls of several sessions are in flight';
      if (!first.target) return 'the tool call in flight has no session to ask (a direct execution)';
      return first;
    },
  };
}

/** Registers the `elicitation/create` handler (before `connect`) when the config declares a mode. */
export function attachElicitation(
  client: Client,
  config: McpServerConfig,
  serverId: string,
  calls: ReturnType<typeof createInFlightCalls>,
  log: Logger,
): void {
  const modes = elicitationModes(config);
  if (!modes.form && !modes.url) return;
  client.setRequestHandler('elicitation/create', async ({ params }, ctx): Promise<ElicitResult> => {
    const call = calls.route();
    if (typeof call === 'string' || !call.target) {
      log.warn({ serverId, reason: call }, 'elicitation declined: no session to ask');
      return { action: 'decline' };
    }
    const ask = askOf(serverId, params);
    const signal = AbortSignal.any([ctx.mcpReq.signal, call.ended.signal]);
    const answer = await call.target.elicit(ask, { deadline: call.deadline, signal });
    if (answer.action !== 'accept') return { action: answer.action };
    if (ask.mode === 'url') return { action: 'accept' };
    return { action: 'accept', content: withDefaults(ask.requestedSchema, answer.content ?? {}) };
  });
}

type FieldValue = ElicitationContent[string];
const isFieldValue = (value: unknown): value is FieldValue =>
  ['string', 'number', 'boolean'].includes(typeof value) ||
  (Array.isArray(value) && value.every((v) => typeof v === 'string'));

/** The answer with each field it leaves out set to the schema's `default` (SEP-1034). */
function withDefaults(schema: Record<string, unknown>, content: ElicitationContent): ElicitationContent {
  const properties = (schema.properties ?? {}) as Record<string, { default?: unknown } | null>;
  const filled: ElicitationContent = { ...content };
  for (const [field, property] of Object.entries(properties)) {
    const fallback = property?.default;
    if (filled[field] === undefined && isFieldValue(fallback)) filled[field] = fallback;
  }
  return filled;
}

const askOf = (serverId: string, params: ElicitRequest['params']): ElicitationAsk =>
  params.mode === 'url'
    ? { serverId, message: params.message, mode: 'url', url: params.url, elicitationId: params.elicitationId }
    : { serverId, message: params.message, mode: 'form', requestedSchema: params.requestedSchema };
