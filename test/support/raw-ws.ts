/**
 * A WebSocket client on a bare TCP socket (the upgrade written by hand), for tests that must control reading: it
 * reads only while `reading`, so a paused one leaves everything the server sends in the kernel's buffers and the
 * server's. Frames from the server are parsed as RFC 6455 §5.2 lays them out (a server never masks); frames to it are
 * masked text frames.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

export interface RawWsFrame {
  opcode: number;
  payload: Buffer;
}

export interface RawWs {
  socket: Socket;
  /** The client's TCP port (the server sees it as the remote port). */
  localPort: number;
  frames: RawWsFrame[];
  /** Sends a masked text frame of `value` as JSON. */
  send(value: unknown): void;
  /** Resolves with the first text frame (recorded or future) whose JSON `event` is `event`. */
  next(event: string): Promise<unknown>;
  /** The close frame the server sent: its code and reason, once one arrived. */
  closeFrame(): { code: number; reason: string } | undefined;
  /** Stops reading from the socket (the kernel's buffers fill, then the server's). */
  pause(): void;
  resume(): void;
  /** The TCP connection ended (the server's FIN or reset reached this client, once it reads). */
  ended: Promise<void>;
}

/** Opens `ws://host:port/` on a bare socket, reading; resolves once the server switched protocols. */
export function connectRawWs(port: number, host = '127.0.0.1'): Promise<RawWs> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host });
    const frames: RawWsFrame[] = [];
    const waiters = new Set<() => void>();
    let pending = Buffer.alloc(0);
    let upgraded = false;
    let endedResolve!: () => void;
    const ended = new Promise<void>((r) => (endedResolve = r));
    socket.on('error', () => undefined); // a reset: 'close' follows
    socket.on('close', () => endedResolve());
    socket.on('end', () => endedResolve());
    socket.on('connect', () => {
      socket.write(
        `GET / HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    const text = (f: RawWsFrame) => f.payload.toString('utf8');
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (!upgraded) {
        const head = pending.indexOf('\r\n\r\n');
        if (head < 0) return;
        const status = pending.toString('latin1', 9, 12);
        if (status !== '101') return reject(new Error(`upgrade refused: ${pending.toString('latin1', 0, head)}`));
        upgraded = true;
        pending = pending.subarray(head + 4);
        resolve(client);
      }
      for (let frame = parseFrame(pending); frame; frame = parseFrame(pending)) {
        frames.push(frame.frame);
        pending = pending.subarray(frame.size);
      }
      for (const wake of waiters) wake();
    });
    const client: RawWs = {
      socket,
      get localPort() {
        return socket.localPort!;
      },
      frames,
      send(value) {
        socket.write(maskedTextFrame(JSON.stringify(value)));
      },
      next(event) {
        return new Promise((found) => {
          const check = () => {
            const hit = frames.find(
              (f) => f.opcode === 1 && (JSON.parse(text(f)) as { event?: string }).event === event,
            );
            if (!hit) return;
            waiters.delete(check);
            found(JSON.parse(text(hit)));
          };
          waiters.add(check);
          check();
        });
      },
      closeFrame() {
        const close = frames.find((f) => f.opcode === 8);
        return close && { code: close.payload.readUInt16BE(0), reason: close.payload.toString('utf8', 2) };
      },
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      ended,
    };
  });
}

/** One whole frame at the start of `buf` and its size in bytes, or undefined while it is not all there. */
function parseFrame(buf: Buffer): { frame: RawWsFrame; size: number } | undefined {
  if (buf.length < 2) return undefined;
  const opcode = buf[0]! & 0x0f;
  let length = buf[1]! & 0x7f;
  let head = 2;
  if (length === 126) {
    if (buf.length < 4) return undefined;
    length = buf.readUInt16BE(2);
    head = 4;
  } else if (length === 127) {
    if (buf.length < 10) return undefined;
    length = Number(buf.readBigUInt64BE(2));
    head = 10;
  }
  if (buf.length < head + length) return undefined;
  return { frame: { opcode, payload: Buffer.from(buf.subarray(head, head + length)) }, size: head + length };
}

/** A client's text frame: FIN, opcode 1, masked (RFC 6455 §5.3). */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length;
  const head = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.alloc(head + 4 + length);
  frame[0] = 0x81;
  if (head === 2) frame[1] = 0x80 | length;
  else if (head === 4) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  const mask = randomBytes(4);
  mask.copy(frame, head);
  for (let i = 0; i < length; i++) frame[head + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return frame;
}

/** The server's side of a loopback TCP connection in /proc/net/tcp (Linux), or undefined where there is none. */
function serverSide(serverPort: number, clientPort: number): string[] | 'no table' | undefined {
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return 'no table';
  }
  const local = `:${serverPort.toString(16).toUpperCase().padStart(4, '0')}`;
  const remote = `:${clientPort.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1]?.endsWith(local) && fields[2]?.endsWith(remote)) return fields;
  }
  return undefined;
}

/**
 * Bytes the kernel holds on the server's side of a loopback TCP connection, not yet taken by the client (Linux,
 * /proc/net/tcp `tx_queue`; the server's own buffers come on top), or undefined where that cannot be read.
 */
export function serverSideUnsent(serverPort: number, clientPort: number): number | undefined {
  const fields = serverSide(serverPort, clientPort);
  if (fields === 'no table' || fields === undefined) return undefined;
  return parseInt(fields[4]!.split(':')[0]!, 16);
}

/**
 * The kernel's state of the server's side of a loopback TCP connection (Linux, /proc/net/tcp): `established`,
 * `closed` (the server closed it: FIN sent or on its way, or the socket is gone), or `unknown` where there is no
 * /proc/net/tcp.
 */
export function serverSideState(serverPort: number, clientPort: number): 'established' | 'closed' | 'unknown' {
  const fields = serverSide(serverPort, clientPort);
  if (fields === 'no table') return 'unknown';
  return fields?.[3] === '01' ? 'established' : 'closed';
}
