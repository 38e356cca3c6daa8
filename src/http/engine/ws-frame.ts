/**
 * A server's WebSocket text frame as bytes (RFC 6455 §5.2), for the node engine to write itself.
 *
 * Contract: exactly the bytes `ws` writes for `send(text)` on a server socket without permessage-deflate
 * (FIN, opcode 1, no mask, the shortest length form `ws` uses), in one buffer: a frame published to many
 * sockets is built once, and each socket takes one write of it.
 */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text);
  const head = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + length);
  frame[0] = 0x81; // FIN, text
  if (head === 2) frame[1] = length;
  else if (head === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt16BE(0, 2);
    frame.writeUIntBE(length, 4, 6);
  }
  frame.write(text, head, 'utf8');
  return frame;
}
