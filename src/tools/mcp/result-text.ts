/**
 * What the model reads of a tool result. `resultText`: text blocks as is, other blocks as one-line notes (binary never
 * inlined); only `structuredContent`: its JSON. It is then cut by capText (src/conversation/tool-shapes.ts).
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
