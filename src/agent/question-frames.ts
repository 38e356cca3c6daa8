/** The frames of questions (src/conversation/questions.ts), read back as the one record every face maps. */
import { answerOf, questionOf, type Question, type QuestionAnswer } from '../conversation/questions.ts';
import { EVENT_VERSION, type SessionEvent } from '../conversation/session-events.ts';
import type { AgentFrame, FrameName } from './frames.ts';

/** The frames that ask a question, and those that close one. */
export const QUESTION_ASKED = [
  'toolApprovalRequested',
  'elicitationRequested',
  'clientToolRequested',
] as const satisfies readonly FrameName[];
export const QUESTION_ANSWERED = [
  'toolApprovalResolved',
  'elicitationResolved',
  'clientToolResolved',
] as const satisfies readonly FrameName[];
const asks = (frame: AgentFrame) => (QUESTION_ASKED as readonly string[]).includes(frame.event);
const answers = (frame: AgentFrame) => (QUESTION_ANSWERED as readonly string[]).includes(frame.event);

/** The event a question's frame was made of: its frame carries every field of it (but a form's content typed). */
const eventOfFrame = (frame: AgentFrame) => ({ v: EVENT_VERSION, type: frame.event, ...frame.data }) as SessionEvent;

/** The question a frame asks; `undefined` for any other frame. */
export const questionOfFrame = (frame: AgentFrame): Question | undefined =>
  asks(frame) ? questionOf(eventOfFrame(frame), frame.data.sessionId) : undefined;

/** The question a frame closes, its answer (without a form's content) and who gave it; `undefined` for other frames. */
export const answerOfFrame = (frame: AgentFrame): { id: string; answer: QuestionAnswer; by: string } | undefined =>
  answers(frame) ? answerOf(eventOfFrame(frame)) : undefined;
