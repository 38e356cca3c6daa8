/**
 * `sampling/createMessage` from a tool server. `mcpServers.<name>.sampling`: `deny` (default: not declared, no
 * handler, the SDK answers method-not-found), `ask` (`needsApproval`) or `allow`.
 * - A request is served by the Sampler of the latest call in flight on the connection, with its deadline and a
 *   signal that aborts when the server cancels or the call ends; none in flight, or no sampler: InvalidRequest.
 * - SamplingRefused answers with code -1 (the spec's user rejection) and the reason; any other failure InternalError.
 * - Text only (else InvalidRequest); `maxTokens` capped by `samplingMaxTokens` (default DEFAULT_SAMPLING_MAX_TOKENS);
 *   model preferences, context, temperature, stop sequences and metadata are ignored.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  type Client,
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
} from '@modelcontextprotocol/client';
import type { McpServerConfig } from '../../config/schema.ts';
import type { SamplingPolicy } from '../../config/server-features.ts';
import { SamplingRefused, type Sampler, type SamplingReply, type SamplingRequest } from '../server-asks.ts';
import { messageOf } from '../../errors/index.ts';

export const DEFAULT_SAMPLING_MAX_TOKENS = 1024;

/** The JSON-RPC error code of a refused sampling request (the MCP spec's example for a user's rejection). */
const SAMPLING_REFUSED = -1;

export const samplingPolicy = (config: McpServerConfig): SamplingPolicy => config.sampling ?? 'deny';

export const samplingCapability = (config: McpServerConfig): ClientCapabilities =>
  samplingPolicy(config) === 'deny' ? {} : { sampling: {} };

/** The request for the model, or a ProtocolError (InvalidRequest) saying why not. */
export function toSamplingRequest(
  serverId: string,
  params: CreateMessageRequest['params'],
  config: Pick<McpServerConfig, 'sampling' | 'samplingMaxTokens'>,
): SamplingRequest {
  const messages = params.messages.map((m, i) => {
    const parts = Array.isArray(m.content) ? m.content : [m.content];
    const texts = parts.map((c) => {
      if (c.type !== 'text')
        throw new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `sampling: message ${i} holds ${c.type} content; agentd samples text only`,
        );
      return c.text;
    });
    return { role: m.role, content: texts.join('\n') };
  });
  const bound = config.samplingMaxTokens ?? DEFAULT_SAMPLING_MAX_TOKENS;
  return {
    serverId,
    ...(params.systemPrompt !== undefined && { systemPrompt: params.systemPrompt }),
    messages,
    maxTokens: Math.min(params.maxTokens, bound),
    needsApproval: config.sampling === 'ask',
  };
}

/** Registers the `sampling/createMessage` handler (before `connect`) unless the policy is `deny`. */
export function attachSampling(
  client: Client,
  serverId: string,
  config: McpServerConfig,
  current: ReturnType<typeof createSamplerStack>['current'],
): void {
  if (samplingPolicy(config) === 'deny') return;
  client.setRequestHandler('sampling/createMessage', async ({ params }, ctx): Promise<CreateMessageResult> => {
    const call = current();
    if (!call)
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        "sampling: agentd serves sampling only during one of this server's tool calls in a session turn",
      );
    const request = toSamplingRequest(serverId, params, config);
    let reply: SamplingReply;
    try {
      reply = await call.sampler(request, {
        deadline: call.deadline,
        signal: AbortSignal.any([ctx.mcpReq.signal, call.ended]),
      });
    } catch (error) {
      if (error instanceof SamplingRefused) throw new ProtocolError(SAMPLING_REFUSED, error.message);
      throw new ProtocolError(ProtocolErrorCode.InternalError, `sampling failed: ${messageOf(error)}`);
    }
    return {
      role: 'assistant',
      content: { type: 'text', text: reply.text },
      model: reply.model,
      stopReason: reply.stopReason,
    };
  });
}

/** The samplers of a connection's calls in flight, latest last. */
export function createSamplerStack() {
  const stack: { sampler: Sampler; deadline: number; ended: AbortSignal }[] = [];
  return {
    current: () => stack.at(-1),
    /** Pushes `sampler` (when given) for a call ending by `deadline`; returns the function that pops it. */
    enter(sampler: Sampler | undefined, deadline: number): () => void {
      if (!sampler) return () => {};
      const ended = new AbortController();
      const call = { sampler, deadline, ended: ended.signal };
      stack.push(call);
      return () => {
        ended.abort();
        const at = stack.indexOf(call);
        if (at >= 0) stack.splice(at, 1);
      };
    },
  };
}
