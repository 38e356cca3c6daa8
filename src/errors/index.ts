/** The error component: the table (code → HTTP status, JSON-RPC code) and one encoder per protocol. */
export { AppError, ERROR_TABLE, httpStatus, isAppError, toErrorBody, type ErrorBody, type ErrorCode } from './table.ts';
export { toA2aRest, toA2aRpc, toAgUiRunError, toJsonRpc, toRestReply, toWsFrame } from './encode.ts';
export { messageOf } from './message.ts';
