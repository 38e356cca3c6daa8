/**
 * An answer's content checked against its question (decide.ts `answer`): a form's content (MCP's flat values) against
 * its `requestedSchema`, INVALID_REQUEST naming the field otherwise; a client tool's result cut to the tool-result bound.
 */
import {
  type AnswerInput,
  type ElicitationContent,
  type Question,
  type QuestionAnswer,
} from '../../conversation/questions.ts';
import { capText } from '../../conversation/tool-shapes.ts';
import { AppError } from '../../errors/index.ts';
import type { ArgsValidator } from '../../tools/args-validator.ts';

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isValue = (v: unknown) =>
  typeof v === 'string' ||
  typeof v === 'number' ||
  typeof v === 'boolean' ||
  (Array.isArray(v) && v.every((x) => typeof x === 'string'));
const invalid = (field: string, message: string) =>
  new AppError('INVALID_REQUEST', `Invalid elicitation content: ${field} ${message}`, { field, issue: message });

/** The field an issue of the validator is about: its path, or the property a `required` names. */
function fieldOf(path: string, message: string): string {
  if (path !== '/' && path !== '') return path.replace(/^\//, '').split('/')[0] ?? path;
  return /property '([^']+)'/.exec(message)?.[1] ?? 'content';
}

/**
 * The answer `q` takes from `input` (decide.ts' contracts for `answer`): a form's content checked, a client tool's result and
 * error cut to `maxResultBytes` as every tool result the model reads (capText), anything else without content.
 */
export function checkAnswer(
  q: Pick<Question, 'kind' | 'mode' | 'requestedSchema'>,
  input: AnswerInput,
  { validate, maxResultBytes }: { validate: ArgsValidator; maxResultBytes: number },
): QuestionAnswer {
  if ('decision' in input) {
    const { decision, reason, raiseTo } = input;
    if (raiseTo !== undefined && (q.kind !== 'budget' || decision !== 'approve'))
      throw new AppError('INVALID_REQUEST', '`raiseTo` answers only a budget question, with `decision: "approve"`', {
        field: 'raiseTo',
      });
    return { decision, ...(reason !== undefined && { reason }), ...(raiseTo !== undefined && { raiseTo }) };
  }
  if (!('action' in input)) {
    const cap = (text: string) => capText(text, maxResultBytes).text;
    return { content: cap(input.content), ...(input.error !== undefined && { error: cap(input.error) }) };
  }
  if (input.action !== 'accept' || q.mode === 'url') return { action: input.action };
  const { content } = input;
  if (content === undefined) throw invalid('content', 'is required to accept a form');
  if (!isPlainObject(content)) throw invalid('content', 'must be an object');
  const bad = Object.entries(content).find(([, v]) => !isValue(v));
  if (bad) throw invalid(bad[0], 'must be a string, number, boolean or array of strings');
  const issue = validate(q.requestedSchema ?? { type: 'object' }, content)[0];
  if (issue) throw invalid(fieldOf(issue.path, issue.message), issue.message);
  return { action: 'accept', content: content as ElicitationContent };
}
