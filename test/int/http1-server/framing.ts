/**
 * How a byte stream is framed into requests, by agentd's HTTP/1.1 server wire (src/http/engine/http1-server) and by
 * Node's `node:http` (llhttp, strict, as shipped), for the differential tests beside this file. Both framings are
 * written the same way: the requests read whole (method, target, body), then how the stream ended.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { bodyDecoder, HeadReader, RequestRefused } from '../../../src/http/engine/http1-server/index.ts';

export interface FramedRequest {
  method: string;
  target: string;
  /** The body as latin1 text; undefined for an upgrade (what follows its head is another protocol's). */
  body: string | undefined;
}

export interface Framing {
  requests: FramedRequest[];
  /**
   * `refused`: the parser stopped at an error; `incomplete`: the stream ended inside a message; `done`: it ended
   * between messages, or after one that closes the connection (`Connection: close`, HTTP/1.0, an upgrade).
   */
  end: 'refused' | 'incomplete' | 'done';
}

const MAX_HEAD = 16 * 1024;

/** agentd's framing of `bytes` (what http1-server/connection.ts does with them, handlers aside). */
export function frameWithAgentd(bytes: Buffer): Framing {
  const heads = new HeadReader(MAX_HEAD);
  const requests: FramedRequest[] = [];
  let data = bytes;
  try {
    for (;;) {
      const read = heads.push(data);
      if (!read) return { requests, end: heads.empty ? 'done' : 'incomplete' };
      const { head, rest } = read;
      const decoder = bodyDecoder(head.body);
      const pieces: Buffer[] = [];
      const at = decoder.feed(rest, 0, (piece) => pieces.push(piece));
      if (!decoder.done) return { requests, end: 'incomplete' };
      const body = head.upgrade ? undefined : Buffer.concat(pieces).toString('latin1');
      requests.push({ method: head.method, target: head.target, body });
      if (!head.keepAlive || head.upgrade) return { requests, end: 'done' };
      data = rest.subarray(at);
    }
  } catch (err) {
    if (err instanceof RequestRefused) return { requests, end: 'refused' };
    throw err;
  }
}

interface Recording extends Framing {
  settle: (framing: Framing) => void;
  /** The last request closed the connection: what node:http reads after it is not counted. */
  closed: boolean;
}

/** A `node:http` server on loopback that frames what each connection sends; `frame` sends one stream and waits. */
export class NodeFramer {
  private server: Server | undefined;
  private port = 0;
  /** Per client port, the framing under way. */
  private readonly recordings = new Map<number, Recording>();

  async start(): Promise<void> {
    // Host is checked below as node:http's own check does (requireHostHeader), but as a refusal this can see.
    const server = createServer({ requireHostHeader: false, keepAliveTimeout: 60_000 });
    server.on('connection', (socket: Socket) => {
      const port = socket.remotePort!;
      socket.on('close', () => {
        const recording = this.recordings.get(port);
        recording?.settle({ requests: recording.requests, end: recording.end });
      });
    });
    server.on('request', (req: IncomingMessage, res) => {
      const recording = this.recordings.get(req.socket.remotePort!);
      if (!recording || recording.closed) return void res.end();
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        recording.end = 'refused';
        recording.closed = true;
        return void req.socket.destroy();
      }
      if (!res.shouldKeepAlive) recording.closed = true;
      const pieces: Buffer[] = [];
      recording.end = 'incomplete';
      req.on('data', (piece: Buffer) => pieces.push(piece));
      req.on('end', () => {
        // Bodies end in order: a pipelined request's 'end' never comes before its predecessor's.
        recording.requests.push({
          method: req.method!,
          target: req.url!,
          body: Buffer.concat(pieces).toString('latin1'),
        });
        if (recording.end === 'incomplete') recording.end = 'done';
        res.end();
      });
    });
    const upgrade = (req: IncomingMessage, socket: Socket) => {
      const recording = this.recordings.get(socket.remotePort!);
      if (recording && !recording.closed) {
        recording.requests.push({ method: req.method!, target: req.url!, body: undefined });
        recording.end = 'done';
        recording.closed = true;
      }
      socket.destroy();
    };
    server.on('upgrade', upgrade);
    server.on('connect', upgrade);
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      const recording = this.recordings.get(socket.remotePort!);
      if (recording && !recording.closed) {
        recording.end = err.code === 'HPE_INVALID_EOF_STATE' ? 'incomplete' : 'refused';
        recording.closed = true;
      }
      socket.destroy();
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** node:http's framing of `bytes`, sent at once and followed by the end of the stream. */
  frame(bytes: Buffer): Promise<Framing> {
    return new Promise((resolve) => {
      const socket = connect({ port: this.port, host: '127.0.0.1', allowHalfOpen: true });
      socket.on('error', () => undefined); // a refusal may reset the connection: the server's 'close' settles
      socket.on('data', () => undefined);
      socket.on('close', () => socket.destroy());
      socket.on('connect', () => {
        const port = socket.localPort!;
        const recording: Recording = {
          requests: [],
          end: 'done',
          closed: false,
          settle: (framing) => {
            this.recordings.delete(port);
            resolve(framing);
          },
        };
        this.recordings.set(port, recording);
        socket.end(bytes);
      });
    });
  }
}

/**
 * How agentd's framing of a stream stands to llhttp's: `same`; `stricter` (agentd served a prefix of the requests
 * llhttp served, the same ones, and stopped differently: refused, waited for more, or closed); `looser` (agentd
 * served a request llhttp did not, or a different one: what request smuggling needs).
 */
export function relation(agentd: Framing, llhttp: Framing): 'same' | 'stricter' | 'looser' {
  const key = (value: unknown) => JSON.stringify(value);
  if (key(agentd) === key(llhttp)) return 'same';
  const within =
    agentd.requests.length <= llhttp.requests.length &&
    agentd.requests.every((request, i) => key(request) === key(llhttp.requests[i]));
  return within ? 'stricter' : 'looser';
}
