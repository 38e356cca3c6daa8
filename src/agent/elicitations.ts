/**
 * A session's elicitations as a fold of its events: the questions tool servers asked during its
 * turns that wait for the user's answer, and the check of an answer against the question.
 *
 * Contracts:
 * - A question is pending from its `elicitationRequested` until its `elicitationResolved`, its turn's
 *   end (`response`, `turnFailed`) or a reset; then it is answered.
 * - `peek` finds a pending question without answering it (ELICITATION_NOT_FOUND when unknown,
 *   ELICITATION_ALREADY_RESOLVED when answered); `answer` then marks it answered at once, before its
 *   resolution is stored, so a second answer is refused even while the first is being written.
 * - `checkContent`: an `accept` of a form needs `content`, a flat object whose values are strings,
 *   numbers, booleans or arrays of strings (MCP's restriction), valid against `requestedSchema`;
 *   otherwise INVALID_REQUEST with `details.field` naming the field (`content` for the object
 *   itself). An `accept` of a URL, a `decline` and a `cancel` carry no content (any given is dropped).
 */
import type { SessionEvent, SessionEventOf } from '../conversation/session-events.ts';
import { AppError } from '../errors/index.ts';
import { sessionIdOf } from '../session-id.ts';
import type { ArgsValidator } from '../tools/args-validator.ts';
import type { ElicitationAnswer, ElicitationContent } from '../tools/elicitation.ts';

/** A question waiting for its answer, as `GET /api/sessions/{id}/elicitations` lists it. */
export type PendingElicitation = Omit<SessionEventOf<'elicitationRequested'>, 'v' | 'type'> & { sessionId: string };

export interface Elicitations {
  apply(event: SessionEvent): void;
  /** The pending questions, oldest first. */
  pending(): PendingElicitation[];
  peek(id: string): PendingElicitation;
  answer(id: string): PendingElicitation;
}

export function createElicitations(sessionId: string): Elicitations {
  const pending = new Map<string, PendingElicitation>();
  const answered = new Set<string>();
  const close = (id: string) => {
    pending.delete(id);
    answered.add(id);
  };
  const peek = (id: string): PendingElicitation => {
    const p = pending.get(id);
    if (p) return p;
    const name = sessionIdOf(sessionId);
    if (answered.has(id)) throw new AppError('ELICITATION_ALREADY_RESOLVED', `The elicitation ${id} was already answered`, { sessionId: name, id });
    throw new AppError('ELICITATION_NOT_FOUND', `No elicitation ${id} waits for an answer in session ${name}`, { sessionId: name, id });
  };
  return {
    apply(e) {
      switch (e.type) {
        case 'elicitationRequested': {
          const { v: _v, type: _t, ...rest } = e;
          if (!answered.has(e.id)) pending.set(e.id, { sessionId, ...rest });
          return;
        }
        case 'elicitationResolved':
          return close(e.id);
        case 'response':
        case 'turnFailed':
          for (const p of [...pending.values()]) if (p.turnId === e.turnId) close(p.id);
          return;
        case 'reset':
          for (const id of [...pending.keys()]) close(id);
          return;
        default:
          return;
      }
    },
    pending: () => [...pending.values()],
    peek,
    answer(id) {
      const p = peek(id);
      close(id);
      return p;
    },
  };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isValue = (v: unknown) =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));

const invalid = (field: string, message: string) => new AppError('INVALID_REQUEST', `Invalid elicitation content: ${field} ${message}`, { field, issue: message });

/** The field an issue of the validator is about: its path, or the property a `required` names. */
function fieldOf(path: string, message: string): string {
  if (path !== '/' && path !== '') return path.replace(/^\//, '').split('/')[0] ?? path;
  return /property '([^']+)'/.exec(message)?.[1] ?? 'content';
}

/** The content an answer to `p` carries (see the contracts); throws INVALID_REQUEST naming the field. */
export function checkContent(p: Pick<PendingElicitation, 'mode' | 'requestedSchema'>, answer: { action: ElicitationAnswer['action']; content?: unknown }, validate: ArgsValidator): ElicitationContent | undefined {
  if (answer.action !== 'accept' || p.mode === 'url') return undefined;
  const { content } = answer;
  if (content === undefined) throw invalid('content', 'is required to accept a form');
  if (!isPlainObject(content)) throw invalid('content', 'must be an object');
  const bad = Object.entries(content).find(([, v]) => !isValue(v));
  if (bad) throw invalid(bad[0], 'must be a string, number, boolean or array of strings');
  const issue = validate(p.requestedSchema ?? { type: 'object' }, content)[0];
  if (issue) throw invalid(fieldOf(issue.path, issue.message), issue.message);
  return content as ElicitationContent;
}
