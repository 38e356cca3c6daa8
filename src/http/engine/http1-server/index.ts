/**
 * agentd's HTTP/1.1 server wire (README.md beside this file): request heads and bodies read strictly, connections
 * kept alive and pipelined. What the node engine (src/http/engine/node*.ts) uses of it, and nothing more.
 */
export {
  Connections,
  Http1Connection,
  NODE_LIMITS,
  type BodyRead,
  type ConnectionLimits,
  type ConnectionServer,
  type Exchange,
} from './connection.ts';
export { HeadReader, parseRequestHead } from './head-reader.ts';
export { bodyDecoder, type BodyDecoder } from './request-body.ts';
export { FIELD_NAME, RequestRefused, type BodyFraming, type RequestHead } from './request-head.ts';
