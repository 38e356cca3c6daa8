/**
 * What the model reads of a tool result. `resultText`: text blocks as is, other blocks as one-line notes (binary never
 * inlined); only `structuredContent`: its JSON. `capText`: at most `maxBytes` UTF-8 bytes, never splitting a character;
 * a cut text ends with `\n[... truncated N bytes by agentd]` (the marker counts towards the cap).
 */
import type { CallToolResult } from '@modelcontextprotocol/client';

type Block = CallToolResult['content'][number];

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
    case 'resource': {
      const r = block.resource;
      return 'text' in r && typeof r.text === 'string'
        ? r.text
        : `[resource: ${r.uri}${r.mimeType ? `, ${r.mimeType}` : ''}]`;
    }
    case 'resource_link':
      return `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

export function resultText(result: Pick<CallToolResult, 'content' | 'structuredContent'>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return content.map(blockText).join('\n');
}

const marker = (bytes: number) => `\n[... truncated ${bytes} bytes by agentd]`;

export function capText(text: string, maxBytes: number): { text: string; truncatedBytes: number } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, truncatedBytes: 0 };
  // The marker's own length depends on N; sizing it for the whole text is an upper bound.
  let keep = Math.max(0, maxBytes - Buffer.byteLength(marker(buf.length)));
  while (keep > 0 && (buf[keep]! & 0xc0) === 0x80) keep--;
  const removed = buf.length - keep;
  return { text: buf.subarray(0, keep).toString('utf8') + marker(removed), truncatedBytes: removed };
}
