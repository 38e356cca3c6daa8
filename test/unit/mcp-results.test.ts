import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/index.ts';
import { createArgsValidator } from '../../src/tools/args-validator.ts';
import { capText } from '../../src/conversation/tool-shapes.ts';
import { resultText } from '../../src/tools/mcp/result-text.ts';

describe('capText', () => {
  it('leaves text within the cap alone', () => {
    expect(capText('hello', 5)).toEqual({ text: 'hello', truncatedBytes: 0 });
  });

  it('cuts to the cap, marker included, and says how much was cut', () => {
    const text = 'a'.repeat(10_000);
    const out = capText(text, 1_000);
    expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(1_000);
    expect(out.text).toMatch(/^a+\n\[\.\.\. truncated \d+ bytes by agentd\]$/);
    const kept = out.text.indexOf('\n');
    expect(out.truncatedBytes).toBe(10_000 - kept);
    expect(out.text).toContain(`truncated ${out.truncatedBytes} bytes`);
  });

  it('never splits a multi-byte character', () => {
    for (let cap = 40; cap < 60; cap++) {
      const out = capText('é€😀'.repeat(100), cap);
      expect(out.text).not.toContain('\uFFFD');
      expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(cap);
    }
  });

  it('returns just the marker when the cap is smaller than the marker', () => {
    expect(capText('abcdefghij'.repeat(10), 5).text).toBe('\n[... truncated 100 bytes by agentd]');
  });
});

describe('resultText', () => {
  it('renders every kind of content block as text for the model', () => {
    const text = resultText({
      content: [
        { type: 'text', text: 'one' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'audio', data: 'AAAAAAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inline text' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
      ],
    });
    expect(text.split('\n')).toEqual([
      'one',
      '[image: image/png, 3 bytes]',
      '[audio: audio/wav, 6 bytes]',
      'inline text',
      '[resource: file:///b.bin, application/octet-stream]',
      '[resource link: file:///c (c)]',
    ]);
  });

  it('uses structuredContent when there is no content', () => {
    expect(resultText({ content: [], structuredContent: { a: 1 } })).toBe('{"a":1}');
  });
});

describe('args validator', () => {
  const validate = createArgsValidator(createLogger('silent'));
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { a: { type: 'number' }, mode: { enum: ['x', 'y'] }, url: { type: 'string', format: 'uri' } },
    required: ['a'],
    additionalProperties: false,
  };

  it('accepts valid arguments and ignores formats', () => {
    expect(validate(schema, { a: 1, mode: 'x', url: 'not a uri' })).toEqual([]);
  });

  it('lists every problem with its path', () => {
    expect(validate(schema, { mode: 'z', extra: true })).toEqual([
      { path: '/', message: "must have required property 'a'" },
      { path: '/', message: "must NOT have additional properties 'extra'" },
      { path: '/mode', message: 'must be equal to one of the allowed values: "x", "y"' },
    ]);
  });

  it('handles 2020-12 schemas and reused $ids', () => {
    const s2020 = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'urn:x',
      type: 'object',
      prefixItems: [],
    };
    const again = { ...s2020 };
    expect(validate(s2020, {})).toEqual([]);
    expect(validate(again, 1)).toEqual([{ path: '/', message: 'must be object' }]);
  });

  it('lets arguments through when the schema does not compile', () => {
    expect(validate({ type: 'object', properties: { a: { $ref: '#/nowhere' } } }, { a: 1 })).toEqual([]);
  });
});
