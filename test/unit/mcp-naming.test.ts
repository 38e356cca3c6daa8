import { describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/client';
import { MODEL_TOOL_NAME, assignModelNames, clientToolNames, type ToolRef } from '../../src/tools/naming.ts';
import { buildCatalogue, toModelTool } from '../../src/tools/catalogue.ts';

const refs = (pairs: [string, string][]): ToolRef[] => pairs.map(([serverId, toolName]) => ({ serverId, toolName }));

function expectValidAndUnique(names: string[]) {
  for (const n of names) expect(n).toMatch(MODEL_TOOL_NAME);
  expect(new Set(names).size).toBe(names.length);
}

describe('assignModelNames', () => {
  it('keeps unique valid names as they are', () => {
    expect(
      assignModelNames(
        refs([
          ['a', 'read'],
          ['b', 'write'],
          ['b', 'list-all_2'],
        ]),
      ),
    ).toEqual(['read', 'write', 'list-all_2']);
  });

  it('qualifies every tool of a shared name as server--tool', () => {
    const names = assignModelNames(
      refs([
        ['everything', 'echo'],
        ['fixture', 'echo'],
        ['fixture', 'other'],
      ]),
    );
    expect(names).toEqual(['everything--echo', 'fixture--echo', 'other']);
  });

  it('sanitizes invalid characters in tool and server names', () => {
    const names = assignModelNames(
      refs([
        ['my.server', 'get file'],
        ['x', 'ü'],
        ['a.b', 'run'],
        ['c', 'run'],
      ]),
    );
    expect(names.slice(0, 2)).toEqual(['get_file', '_']);
    expect(names.slice(2)).toEqual(['a_b--run', 'c--run']);
    expectValidAndUnique(names);
  });

  it('keeps names distinct when sanitizing makes them equal', () => {
    const names = assignModelNames(
      refs([
        ['s', 'a.b'],
        ['s', 'a_b'],
        ['s', 'a b'],
      ]),
    );
    expectValidAndUnique(names);
    expect(names).toContain('a_b');
  });

  it('treats names that sanitize alike across servers as a collision', () => {
    const names = assignModelNames(
      refs([
        ['one', 'a.b'],
        ['two', 'a_b'],
      ]),
    );
    expect(names).toEqual(['one--a_b', 'two--a_b']);
  });

  it('truncates long names to 64 characters with a hash that keeps them apart', () => {
    const long = 'x'.repeat(80);
    const names = assignModelNames(
      refs([
        ['s', `${long}1`],
        ['s', `${long}2`],
        ['server-with-a-long-name', 'echo'],
        ['t', 'echo'],
      ]),
    );
    expectValidAndUnique(names);
    expect(names[0]).toHaveLength(64);
    expect(names[0]!.startsWith('x'.repeat(55))).toBe(true);
    expect(names[1]).not.toBe(names[0]);
    expect(names.slice(2)).toEqual(['server-with-a-long-name--echo', 't--echo']);
    const longServer = assignModelNames(
      refs([
        ['s'.repeat(64), 'echo'],
        ['t'.repeat(64), 'echo'],
      ]),
    );
    expectValidAndUnique(longServer);
  });

  it('stays unique when a qualified name meets a plain one', () => {
    // "a--b" offered by server z as a plain tool and by the qualification of a/b
    const names = assignModelNames(
      refs([
        ['a', 'b'],
        ['c', 'b'],
        ['z', 'a--b'],
      ]),
    );
    expectValidAndUnique(names);
  });

  it('is deterministic', () => {
    const input = refs([
      ['a', 'x.y'],
      ['b', 'x_y'],
      ['c', 'q'.repeat(70)],
      ['d', 'q'.repeat(70)],
    ]);
    expect(assignModelNames(input)).toEqual(assignModelNames(input));
  });

  it('survives many random collisions', () => {
    const pairs: [string, string][] = [];
    for (let i = 0; i < 300; i++)
      pairs.push([`srv${i % 7}.x`, ['echo', 'e.cho', 'e cho', 'ECHO', 'z'.repeat(70 + (i % 3))][i % 5]!]);
    expectValidAndUnique(assignModelNames(refs(pairs)));
  });
});

describe('buildCatalogue', () => {
  const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
    name,
    inputSchema: { type: 'object', $schema: 'http://json-schema.org/draft-07/schema#', properties: {} },
    ...extra,
  });

  it('offers task-only tools only of a server that runs tools as tasks', () => {
    const tools = [
      tool('x'),
      tool('t', { execution: { taskSupport: 'required' } }),
      tool('o', { execution: { taskSupport: 'optional' } }),
    ];
    expect([...buildCatalogue([{ serverId: 'a', tools, runsTasks: false }]).keys()]).toEqual(['x', 'o']);
    expect([...buildCatalogue([{ serverId: 'a', tools, runsTasks: true }]).keys()]).toEqual(['x', 't', 'o']);
  });

  it('leaves out task-only tools and strips $schema from parameters', () => {
    const catalogue = buildCatalogue([
      {
        serverId: 'a',
        tools: [tool('x', { description: 'does x' }), tool('t', { execution: { taskSupport: 'required' } })],
      },
    ]);
    expect([...catalogue.keys()]).toEqual(['x']);
    expect(toModelTool(catalogue.get('x')!)).toEqual({
      name: 'x',
      description: 'does x',
      parameters: { type: 'object', properties: {} },
      serverId: 'a',
      toolName: 'x',
    });
  });

  it('marks a tool safe to run again when it is read-only or idempotent, or its server says so (a resumed turn repeats its call)', () => {
    const catalogue = buildCatalogue([
      {
        serverId: 'a',
        tools: [
          tool('read', { annotations: { readOnlyHint: true } }),
          tool('put', { annotations: { idempotentHint: true } }),
          tool('send', { annotations: { readOnlyHint: false, destructiveHint: true } }),
          tool('plain'),
        ],
      },
      { serverId: 'b', tools: [tool('any')], idempotent: true },
    ]);
    expect([...catalogue.values()].map((item) => [item.modelName, toModelTool(item).rerunSafe])).toEqual([
      ['read', true],
      ['put', true],
      ['send', undefined],
      ['plain', undefined],
      ['any', true],
    ]);
  });

  it("names a client's tools beside the servers' (which keep theirs): a taken name gets client--, then a hash", () => {
    const names = clientToolNames(new Set(['echo', 'client--dup']), ['locate', 'echo', 'dup', 'dup', 'a b']);
    expect(names.slice(0, 2)).toEqual(['locate', 'client--echo']);
    expect(names[2]).toBe('dup');
    expect(names[3]).toMatch(/^client--dup_[0-9a-f]{8}$/);
    expect(names[4]).toBe('a_b');
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(MODEL_TOOL_NAME);
  });
});
