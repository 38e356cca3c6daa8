/**
 * The v1.0 routes of A2A's HTTP+JSON binding, for the OpenAPI document only (served by `createA2aRestEndpoint`,
 * never routed); the v0.3 and push-notification config routes are in docs/a2a.md.
 */
import { z } from 'zod';
import { documentedOnly, type Route, type RouteDoc } from '../http/route.ts';
import { agentCardSchema, A2A_REST_PATH } from './card.ts';

const task = z.looseObject({
  id: z.string().describe('<contextId>/<turnId>'),
  contextId: z.string(),
  status: z.looseObject({ state: z.string().describe('TASK_STATE_*'), timestamp: z.string() }),
  artifacts: z.array(z.unknown()).optional(),
  history: z.array(z.unknown()).optional(),
});
const sendRequest = z.looseObject({
  message: z.looseObject({
    messageId: z.string(),
    role: z.string().describe('ROLE_USER'),
    parts: z.array(z.unknown()).describe('{ text } or { data } parts'),
    contextId: z.string().optional().describe('the session; a new one without it'),
    taskId: z.string().optional().describe('answers what an input-required task waits for'),
  }),
  configuration: z.looseObject({ returnImmediately: z.boolean().optional() }).optional(),
});
const historyLength = z.number().int().optional().describe('trims the history to its last n messages');
const sseDoc = {
  contentType: 'text/event-stream',
  contentDescription: 'one `data:` line per StreamResponse: { task } first, then { statusUpdate } / { artifactUpdate }',
};
const sendExample = { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'Hello' }] } };

const documented = (method: Route['method'], path: string, summary: string, doc: RouteDoc): Route =>
  documentedOnly({ method, path: `${A2A_REST_PATH}${path}`, summary: `A2A HTTP+JSON: ${summary}`, doc });

export function a2aRestDoc(): Route[] {
  return [
    documented('POST', '/message:send', 'SendMessage (answers { task })', {
      body: sendRequest,
      response: z.object({ task }),
      example: sendExample,
      errors: ['MISSING_FIELD', 'TASK_NOT_FOUND', 'UNSUPPORTED_OPERATION', 'CONTENT_TYPE_NOT_SUPPORTED'],
    }),
    documented('POST', '/message:stream', 'SendStreamingMessage (SSE)', {
      body: sendRequest,
      example: sendExample,
      ...sseDoc,
    }),
    documented('GET', '/tasks', "ListTasks: the caller's tasks, paged", {
      query: z.object({
        contextId: z.string().optional(),
        status: z.string().optional().describe('TASK_STATE_*'),
        pageSize: z.number().int().optional(),
        pageToken: z.string().optional(),
        historyLength,
      }),
      response: z.object({
        tasks: z.array(task),
        nextPageToken: z.string(),
        pageSize: z.number(),
        totalSize: z.number(),
      }),
      errors: ['MISSING_FIELD'],
    }),
    documented('GET', '/tasks/:id', 'GetTask (the id percent-encoded as one segment)', {
      query: z.object({ historyLength }),
      response: task,
      errors: ['TASK_NOT_FOUND'],
    }),
    documented('POST', '/tasks/:id:cancel', 'CancelTask', {
      response: task,
      errors: ['TASK_NOT_FOUND', 'TASK_NOT_CANCELABLE'],
    }),
    documented('POST', '/tasks/:id:subscribe', 'SubscribeToTask (SSE; GET too)', {
      ...sseDoc,
      errors: ['TASK_NOT_FOUND', 'UNSUPPORTED_OPERATION'],
    }),
    documented('GET', '/extendedAgentCard', 'GetExtendedAgentCard', { response: agentCardSchema }),
  ];
}
