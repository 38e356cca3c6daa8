/** The error component: the table (code → HTTP status, JSON-RPC code) and one encoder per protocol. */
export {
  A2A_RPC,
  AppError,
  ERROR_TABLE,
  httpStatus,
  isAppError,
  rpcCode,
  toErrorBody,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetails,
} from './table.ts';
export {
  errorEnvelope,
  toA2aRest,
  toA2aRpc,
  toAgUiRunError,
  toJsonRpc,
  toRestReply,
  toWsFrame,
  type A2aRestErrorBody,
  type EncodedError,
  type JsonRpcErrorBody,
  type RestErrorEnvelope,
  type WsErrorFrame,
} from './encode.ts';
export { messageOf } from './message.ts';
