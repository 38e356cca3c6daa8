/**
 * Tools the client runs (docs/ag-ui.md, "Tools the client runs"): a run's `tools` checked as the turn keeps
 * them, and the trailing `tool` messages of the next run (after the last message of another role) as the
 * answers to the thread's open `clientTool` questions. A trailing message naming a call already closed is
 * refused before anything is answered (APPROVAL_ALREADY_RESOLVED); one naming anything else is no answer.
 */
import { contentToText, type Message, type Tool } from '@ag-ui/core';
import type { Question } from '../agent/index.ts';
import type { Principal } from '../auth/index.ts';
import type { AgUiConfig } from '../config/schema.ts';
import type { ClientToolReply } from '../conversation/questions.ts';
import type { ClientTool } from '../conversation/session-event-fields.ts';
import { AppError } from '../errors/index.ts';
import type { AskedQuestion } from './interrupts.ts';

const MAX_CLIENT_TOOLS = 128;
const MAX_NAME = 128;
const NO_PARAMETERS = { type: 'object', properties: {} };

const invalid = (field: string, message: string) => new AppError('INVALID_REQUEST', message, { field });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const mayDeclare = (config: AgUiConfig['clientTools'], principal: Principal): boolean =>
  config.enabled && (config.principals === undefined || config.principals.includes(principal.name));

export function clientToolsOf(
  tools: readonly Tool[] | undefined,
  principal: Principal,
  config: AgUiConfig['clientTools'],
): ClientTool[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  if (!mayDeclare(config, principal))
    throw new AppError('FORBIDDEN', `The principal "${principal.name}" may not declare tools the client runs`, {
      reason: 'client_tools',
      principal: principal.name,
    });
  if (tools.length > MAX_CLIENT_TOOLS)
    throw invalid('tools', `A run declares at most ${MAX_CLIENT_TOOLS} tools (${tools.length} given)`);
  const names = new Set<string>();
  return tools.map((t, i) => {
    if (t.name.length === 0 || t.name.length > MAX_NAME)
      throw invalid(`tools.${i}.name`, `A tool's name is 1–${MAX_NAME} characters`);
    if (names.has(t.name)) throw invalid(`tools.${i}.name`, `The tool "${t.name}" is declared twice`);
    names.add(t.name);
    const parameters: unknown = t.parameters ?? NO_PARAMETERS;
    if (!isObject(parameters))
      throw invalid(`tools.${i}.parameters`, `The parameters of tool "${t.name}" must be a JSON Schema object`);
    return { name: t.name, description: t.description, parameters };
  });
}

function trailingToolMessages(messages: readonly Message[]): Extract<Message, { role: 'tool' }>[] {
  const last = messages.findLastIndex((m) => m.role !== 'tool');
  return messages.slice(last + 1).filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
}

export function clientResults(
  messages: readonly Message[],
  open: readonly Question[],
  asked: ReadonlyMap<string, AskedQuestion>,
): { q: Question; answer: ClientToolReply }[] {
  const results: { q: Question; answer: ClientToolReply }[] = [];
  for (const m of trailingToolMessages(messages)) {
    const q = open.find((o) => o.kind === 'clientTool' && o.id === m.toolCallId);
    if (q) {
      const content = contentToText(m.content);
      results.push({ q, answer: { content, ...(m.error !== undefined && { error: m.error }) } });
      continue;
    }
    const was = asked.get(m.toolCallId);
    if (was?.question.kind !== 'clientTool') continue;
    const expired = was.closedBy ? was.closedBy.by === 'timeout' : true;
    throw new AppError(
      'APPROVAL_ALREADY_RESOLVED',
      expired
        ? `The client tool call "${m.toolCallId}" expired at ${was.question.expiresAt}: its result came too late`
        : `The client tool call "${m.toolCallId}" already has its result`,
      { toolCallId: m.toolCallId, reason: expired ? 'expired' : 'answered', expiresAt: was.question.expiresAt },
    );
  }
  return results;
}
