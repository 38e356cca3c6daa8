/** Public face of the model simulator (an OpenAI Chat Completions–compatible test server). */
export { startSimulator } from './server.ts';
export { parseDirectives, DirectiveError, type Directive } from './directives.ts';
export { MALFORMED_ARGUMENTS, textOf as contentText } from './plan.ts';
export type {
  ChatRequestBody,
  RecordedRequest,
  Reply,
  ScriptedError,
  ScriptedToolCall,
  Simulator,
  SimulatorOptions,
  UsageMode,
  WireContentPart,
  WireMessage,
  WireToolCall,
} from './types.ts';
