import { describe, expect, it } from 'vitest';
import { DirectiveError, parseDirectives } from '../../tools/simulator/directives.ts';
import { describeImages, planReply, toolResultsText } from '../../tools/simulator/plan.ts';
import { splitPieces } from '../../tools/simulator/render.ts';
import type { ChatRequestBody, WireMessage } from '../../tools/simulator/types.ts';

const body = (messages: WireMessage[]): ChatRequestBody => ({ model: 'm', messages });

describe('parseDirectives', () => {
  it('returns trimmed text when there is no directive', () => {
    expect(parseDirectives('  hello  ')).toEqual({ directives: [], rest: 'hello' });
  });

  it('reads tool directives with JSON that holds brackets and braces in strings', () => {
    const { directives, rest } = parseDirectives('please [[tool:read {"path":"a]]b}","n":[[1]]}]] now [[tool:ls]]');
    expect(directives).toEqual([
      { kind: 'tool', name: 'read', args: '{"path":"a]]b}","n":[[1]]}' },
      { kind: 'tool', name: 'ls', args: '{}' },
    ]);
    expect(rest).toBe('please now');
  });

  it('reads parameters of error, stall and disconnect', () => {
    const { directives } = parseDirectives(
      '[[error:429 retry-after=0.5 times=2 message=slow_down]] [[stall:30 after=2]] [[disconnect]]',
    );
    expect(directives).toEqual([
      { kind: 'error', status: 429, retryAfterSec: 0.5, times: 2, message: 'slow down' },
      { kind: 'stall', ms: 30, afterTokens: 2 },
      { kind: 'disconnect' },
    ]);
  });

  it('takes everything up to "]]" as the reply text', () => {
    expect(parseDirectives('[[reply:Hello, big world!]]').directives).toEqual([
      { kind: 'reply', text: 'Hello, big world!' },
    ]);
    expect(parseDirectives('[[reasoning:First, look. Then act.]] go').directives).toEqual([
      { kind: 'reasoning', text: 'First, look. Then act.' },
    ]);
  });

  it('leaves unknown [[names]] as text', () => {
    expect(parseDirectives('see [[wiki]] and [[tools:x]]')).toEqual({
      directives: [],
      rest: 'see [[wiki]] and [[tools:x]]',
    });
  });

  it.each([
    ['[[len:abc]]', /non-negative integer/],
    ['[[tool:x {"a":]]', /unbalanced JSON/],
    ['[[tool:x {"a":}]]', /not valid JSON/],
    ['[[error:200]]', /400-599/],
    ['[[stall:10 foo=1]]', /unknown parameter "foo"/],
    ['[[tool]]', /needs a value/],
    ['[[len:3', /expected "]]"/],
  ])('rejects %s', (text, message) => {
    expect(() => parseDirectives(text)).toThrow(DirectiveError);
    expect(() => parseDirectives(text)).toThrow(message);
  });
});

describe('planReply', () => {
  it('echoes the last user text without directives', () => {
    expect(
      planReply(
        body([
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'x' },
          { role: 'user', content: 'hi [[ttft:5]] there' },
        ]),
        new Map(),
      ),
    ).toEqual({
      ttftMs: 5,
      text: 'You said: hi there',
    });
  });

  it('fails `times` requests per conversation, then answers', () => {
    const failures = new Map<string, number>();
    const req = body([{ role: 'user', content: '[[error:500 times=2]] go' }]);
    expect(planReply(req, failures).error?.status).toBe(500);
    expect(planReply(req, failures).error?.status).toBe(500);
    expect(planReply(req, failures)).toEqual({ text: 'You said: go' });
    expect(planReply(body([{ role: 'user', content: '[[error:500 times=2]] other' }]), failures).error?.status).toBe(
      500,
    );
  });

  it('answers tool results with their content (or the `reply` text), unless looping', () => {
    const history: WireMessage[] = [
      { role: 'user', content: '[[tool:a]] [[tool:b {"x":1}]]' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', function: { name: 'a', arguments: '{}' } },
          { id: 'c2', function: { name: 'b', arguments: '{"x":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'A!' },
      { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'B!' }] },
    ];
    expect(toolResultsText(history)).toBe('Tool a returned: A!\nTool b returned: B!');
    expect(planReply(body(history), new Map())).toEqual({ text: 'Tool a returned: A!\nTool b returned: B!' });
    history[0] = { role: 'user', content: '[[tool:a]] [[reply:Got it.]]' };
    expect(planReply(body(history), new Map())).toEqual({ text: 'Got it.' });
    history[0] = { role: 'user', content: '[[loop:a]]' };
    expect(planReply(body(history), new Map()).toolCalls).toEqual([{ name: 'a', arguments: '{}' }]);
  });

  it('withholds the reply as a content filter would, even after tool results', () => {
    const reply = { text: '', finishReason: 'content_filter' };
    expect(planReply(body([{ role: 'user', content: 'hi [[filter]]' }]), new Map())).toEqual(reply);
    const afterTool: WireMessage[] = [
      { role: 'user', content: '[[tool:a]] [[filter]]' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'a', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'A!' },
    ];
    expect(planReply(body(afterTool), new Map())).toEqual(reply);
    expect(() => parseDirectives('[[filter:x]]')).toThrow(DirectiveError);
  });

  it('describes images by type and decoded size', () => {
    expect(describeImages('text only')).toBe('The last user message had no image.');
    expect(describeImages([{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }])).toBe(
      'The last user message had an image (image/png, 3 bytes).',
    );
  });
});

describe('splitPieces', () => {
  it('splits into word pieces that join back exactly', () => {
    const text = '  You said:  hello\nworld  ';
    const pieces = splitPieces(text);
    expect(pieces.join('')).toBe(text);
    expect(pieces.length).toBeGreaterThan(3);
  });
});
