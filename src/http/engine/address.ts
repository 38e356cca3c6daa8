/**
 * Peer addresses as the engines hand them to the front end: text, IPv4 dotted, an IPv4-mapped IPv6
 * address (`::ffff:a.b.c.d`) folded to its IPv4 address so both count as one client, other IPv6 in
 * lower-case hex groups with the longest zero run compressed, no zone (`%eth0`).
 */
import { isIPv4 } from 'node:net';

/** The text form of a binary address (4 or 16 bytes, as uWebSockets.js gives it); `unknown` for anything else. */
export function formatIp(raw: ArrayBuffer | Uint8Array): string {
  const b = raw instanceof Uint8Array ? raw : new Uint8Array(raw);
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) return 'unknown';
  const mapped = b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  if (mapped) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** The binary form (4 or 16 bytes) of an address in text, as node reports it (`::ffff:1.2.3.4`, `fe80::1%eth0`). */
export function addressBytes(address: string | undefined): Uint8Array {
  if (!address) return new Uint8Array(0);
  if (isIPv4(address)) return Uint8Array.from(address.split('.'), Number);
  let text = address.split('%')[0]!;
  let ipv4Tail: number[] | undefined; // ::ffff:1.2.3.4
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    ipv4Tail = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number);
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [left = '', right] = text.split('::');
  const groups = (s: string) => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const head = groups(left);
  const tail = right === undefined ? [] : groups(right);
  const out = new Uint8Array(16);
  [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail].forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  if (ipv4Tail) out.set(ipv4Tail, 12);
  return out;
}

/** The canonical text of an address node reports (see the file's comment). */
export const addressText = (address: string | undefined): string =>
  address && isIPv4(address) ? address : formatIp(addressBytes(address));
