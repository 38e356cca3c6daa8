import { request, type IncomingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when empty. */
  body: any;
}

export interface RawOptions {
  method?: string;
  /** A loopback source address, to act as another client IP (each gets its own rate-limit window). */
  localAddress?: string;
  headers?: Record<string, string>;
  /** Written chunk by chunk, each after the previous one was flushed. */
  body?: string | Buffer[];
}

/** One HTTP request through node:http (fetch cannot set Host or a source address). */
export function rawRequest(url: string, opts: RawOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks = typeof opts.body === 'string' ? [Buffer.from(opts.body)] : (opts.body ?? []);
    const length = chunks.reduce((n, c) => n + c.length, 0);
    const headers = { ...(chunks.length > 0 && { 'Content-Length': String(length) }), ...opts.headers };
    const req = request(
      url,
      { method: opts.method ?? 'GET', localAddress: opts.localAddress, headers, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, text, body: text ? JSON.parse(text) : undefined }),
        );
      },
    );
    req.on('error', reject);
    const writeFrom = (i: number): void => {
      if (i >= chunks.length) return void req.end();
      req.write(chunks[i], () => writeFrom(i + 1));
    };
    writeFrom(0);
  });
}

/**
 * A WebSocket upgrade request. Resolves with the refusal (status, headers, body) or, when the server
 * switches protocols, `{ status: 101 }` (the socket is closed at once).
 */
export function rawUpgrade(url: string, opts: Omit<RawOptions, 'body' | 'method'> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      localAddress: opts.localAddress,
      agent: false,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version': '13',
        ...opts.headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode!, headers: res.headers, text: '', body: undefined });
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, text, body: text ? JSON.parse(text) : undefined }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
