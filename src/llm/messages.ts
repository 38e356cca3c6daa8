/**
 * Our chat history → OpenAI Chat Completions request shapes. A user image becomes an `image_url`
 * part with a `data:<mime>;base64,...` URL; assistant tool calls keep their raw argument text.
 */
import type {
  ChatCompletionContentPart,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { ChatMessage, ToolDefinition } from './types.ts';

export function toOpenAiMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user': {
      if (!m.image) return { role: 'user', content: m.content };
      const parts: ChatCompletionContentPart[] = [];
      if (m.content) parts.push({ type: 'text', text: m.content });
      for (const image of [m.image, ...(m.images ?? [])])
        parts.push({ type: 'image_url', image_url: { url: `data:${image.mimeType};base64,${image.base64}` } });
      return { role: 'user', content: parts };
    }
    case 'assistant': {
      if (!m.toolCalls || m.toolCalls.length === 0) return { role: 'assistant', content: m.content };
      return {
        role: 'assistant',
        // Some providers reject an empty string next to tool calls; null is the documented form.
        content: m.content || null,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  }
}

export function toOpenAiTools(tools: ToolDefinition[]): ChatCompletionFunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}
