/**
 * Checks tool arguments against a tool's `inputSchema`: `[]` when acceptable, else one issue per problem (`path` a
 * JSON pointer, `/` the root). Draft-07 unless `$schema` names 2019-09 or 2020-12; `format` is not checked. A schema
 * that does not compile is logged and skipped (the server validates). Validators are cached per schema object.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Logger } from '../log/index.ts';

export interface ArgIssue {
  path: string;
  message: string;
}

export type ArgsValidator = (schema: Record<string, unknown>, args: unknown) => ArgIssue[];

const OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateSchema: false,
  validateFormats: false,
  logger: false,
};

function describeIssue(e: ErrorObject): ArgIssue {
  const params = e.params as Record<string, unknown>;
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') message += ` '${String(params.additionalProperty)}'`;
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues))
    message += `: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return { path: e.instancePath || '/', message };
}

export function createArgsValidator(log: Logger): ArgsValidator {
  // Each dialect's engine is made with its first schema (most servers send draft-07 or none).
  let draft7: Ajv | undefined;
  let draft2019: Ajv2019 | undefined;
  let draft2020: Ajv2020 | undefined;
  const cache = new WeakMap<object, ValidateFunction | null>();

  const compile = (schema: Record<string, unknown>): ValidateFunction | null => {
    if (cache.has(schema)) return cache.get(schema) ?? null;
    const { $schema, $id: _id, ...body } = schema;
    const dialect = typeof $schema === 'string' ? $schema : '';
    const engine = dialect.includes('2020-12')
      ? (draft2020 ??= new Ajv2020(OPTIONS))
      : dialect.includes('2019-09')
        ? (draft2019 ??= new Ajv2019(OPTIONS))
        : (draft7 ??= new Ajv(OPTIONS));
    let fn: ValidateFunction | null;
    try {
      fn = engine.compile(body);
    } catch (err) {
      log.warn({ err }, 'tool inputSchema does not compile; arguments go unchecked');
      fn = null;
    }
    cache.set(schema, fn);
    return fn;
  };

  return (schema, args) => {
    const fn = compile(schema);
    if (!fn || fn(args)) return [];
    return (fn.errors ?? []).map(describeIssue);
  };
}
