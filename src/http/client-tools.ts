/**
 * Tools the client runs, as a message declares them (`tools` of `POST /api/message`, `message-sync` and the WebSocket
 * `message` frame) or an AG-UI run does (`RunAgentInput.tools`): checked as the turn keeps them, under one policy
 * (`agUi.clientTools`: whether they may be declared, and by whom). The model may call them during that turn; each call
 * waits as a `clientTool` question for the client's result (docs/approvals.md).
 * Refusals: 403 FORBIDDEN (`details.reason: "client_tools"`) for a principal the policy leaves out; 400
 * INVALID_REQUEST naming `tools.<i>.<field>` for more than MAX_CLIENT_TOOLS tools, an empty, long or repeated name, or
 * parameters that are not a JSON Schema object.
 */
import { z } from 'zod';
import type { Principal } from '../auth/index.ts';
import type { AgUiConfig } from '../config/schema.ts';
import type { ClientTool } from '../conversation/session-event-fields.ts';
import { AppError } from '../errors/index.ts';

const MAX_CLIENT_TOOLS = 128;
const MAX_NAME = 128;
const NO_PARAMETERS = { type: 'object', properties: {} };

/** The policy where none is given: as `agUi.clientTools` defaults, everyone who may send may declare them. */
export const DEFAULT_CLIENT_TOOLS: AgUiConfig['clientTools'] = { enabled: true };

/** A tool the client runs, as a message declares it. */
export const declaredToolSchema = z.object({
  name: z.string().describe("The tool's name, as the model calls it"),
  description: z.string().optional(),
  parameters: z.unknown().optional().describe("A JSON Schema object for the call's arguments (default: none)"),
});
export type DeclaredTool = z.output<typeof declaredToolSchema>;

/** The `tools` field of the message requests and the WebSocket `message` frame. */
export const declaredToolsField = {
  tools: z
    .array(declaredToolSchema)
    .optional()
    .describe(
      "Tools the client runs, offered to the model for this turn: each call waits as a `clientTool` question for the client's result (`agUi.clientTools` says who may declare them)",
    ),
};

const invalid = (field: string, message: string) => new AppError('INVALID_REQUEST', message, { field });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const mayDeclare = (config: AgUiConfig['clientTools'], principal: Principal): boolean =>
  config.enabled && (config.principals === undefined || config.principals.includes(principal.name));

/** The declared tools as the turn keeps them (undefined for none); throws the refusals above. */
export function clientToolsOf(
  tools: readonly DeclaredTool[] | undefined,
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
    throw invalid('tools', `A message declares at most ${MAX_CLIENT_TOOLS} tools (${tools.length} given)`);
  const names = new Set<string>();
  return tools.map((t, i) => {
    if (t.name.length === 0 || t.name.length > MAX_NAME)
      throw invalid(`tools.${i}.name`, `A tool's name is 1–${MAX_NAME} characters`);
    if (names.has(t.name)) throw invalid(`tools.${i}.name`, `The tool "${t.name}" is declared twice`);
    names.add(t.name);
    const parameters: unknown = t.parameters ?? NO_PARAMETERS;
    if (!isObject(parameters))
      throw invalid(`tools.${i}.parameters`, `The parameters of tool "${t.name}" must be a JSON Schema object`);
    return { name: t.name, description: t.description ?? '', parameters };
  });
}
