// @ts-check
/**
 * `agentd/function-budget`: every function has at most `max` lines of code, unless an exemption names it;
 * exemptions name functions (not files) and only shrink.
 *
 * Contracts:
 * - Lines are counted as ESLint's `max-lines-per-function` counts them with `skipBlankLines` and
 *   `skipComments`: every line from the function's first to its last, less blank lines and lines a
 *   comment covers whole. A method, getter or setter is counted from its key; an IIFE is not counted
 *   (as that rule's default). A nested function's lines count in its parent as well as in itself.
 * - A function's name is its declared name; else the variable, property, method or assignment target
 *   it is the value of; else `<anonymous>@<line>` (the line it starts on).
 * - The exemptions are a JSON list, `[{ "file": "src/x.ts", "function": "createX", "lines": 144 }]`,
 *   read from `exemptions` (a path relative to `root`); `file` is relative to `root`. An exemption
 *   covers every function of that name in that file.
 * - Reported: a function over `max` with no exemption (`tooLong`); an exempted function over its
 *   recorded `lines` (`grew`: exemptions only shrink); an exempted function that fits in `max`
 *   (`fits`: take its exemption off the list); an exemption naming no function of its file (`stale`).
 *   An exempted function between `max` and its recorded lines is fine: it may shrink without an edit
 *   to the list.
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

/** @typedef {{ file: string, function: string, lines: number }} Exemption */
/** @typedef {{ root: string, max: number, exemptions: string }} BudgetOptions */
/** @typedef {import('estree').Node & { parent?: import('estree').Node }} Node */
/** @typedef {import('estree').Comment} Comment */

/**
 * For each line (1-based) a comment touches, the comment (the last one on that line, as ESLint's rule
 * keeps it). @param {Comment[]} comments
 */
function commentLines(comments) {
  /** @type {Map<number, Comment>} */
  const map = new Map();
  for (const comment of comments) {
    const { start, end } = /** @type {import('estree').SourceLocation} */ (comment.loc);
    for (let line = start.line; line <= end.line; line++) map.set(line, comment);
  }
  return map;
}

/** Whether `comment` covers the whole of line `lineNumber` (`line` its text). @param {string} line @param {number} lineNumber @param {Comment} comment */
function coversLine(line, lineNumber, comment) {
  const { start, end } = /** @type {import('estree').SourceLocation} */ (comment.loc);
  const firstOnLine = start.line === lineNumber && !line.slice(0, start.column).trim();
  const lastOnLine = end.line === lineNumber && !line.slice(end.column).trim();
  return (start.line < lineNumber || firstOnLine) && (end.line > lineNumber || lastOnLine);
}

/** A function called where it is defined. @param {Node} node */
function isIIFE(node) {
  return (
    (node.type === 'FunctionExpression' || node.type === 'ArrowFunctionExpression') &&
    node.parent?.type === 'CallExpression' &&
    node.parent.callee === node
  );
}

/** A method, getter or setter, which is counted from its key. @param {Node} node */
function isEmbedded(node) {
  const parent = node.parent;
  if (!parent || !('value' in parent) || parent.value !== node) return false;
  if (parent.type === 'MethodDefinition') return true;
  return parent.type === 'Property' && (parent.method || parent.kind === 'get' || parent.kind === 'set');
}

/**
 * Counts a file's functions' lines of code, as `max-lines-per-function` with skipBlankLines and
 * skipComments. @param {import('eslint').SourceCode} sourceCode
 * @returns {(fn: Node) => { counted: Node, lines: number } | undefined} undefined for an IIFE
 */
export function lineCounter(sourceCode) {
  const comments = commentLines(sourceCode.getAllComments());
  const { lines } = sourceCode;
  return (fn) => {
    const counted = isEmbedded(fn) ? /** @type {Node} */ (fn.parent) : fn;
    if (isIIFE(counted)) return undefined;
    const loc = /** @type {import('estree').SourceLocation} */ (counted.loc);
    let count = 0;
    for (let i = loc.start.line - 1; i < loc.end.line; i++) {
      const line = lines[i] ?? '';
      const comment = comments.get(i + 1);
      if (comment && coversLine(line, i + 1, comment)) continue;
      if (/^\s*$/u.test(line)) continue;
      count++;
    }
    return { counted, lines: count };
  };
}

/** The name of a key, when it is written out (not computed). @param {Node} key @param {boolean} computed */
function keyName(key, computed) {
  if (key.type === 'Identifier' && !computed) return key.name;
  if (key.type === 'PrivateIdentifier') return `#${key.name}`;
  if (key.type === 'Literal' && typeof key.value === 'string') return key.value;
  return undefined;
}

/**
 * A function's name: declared, else what it is assigned to, else `<anonymous>@<line>`.
 * @param {Node} fn
 */
export function functionName(fn) {
  if ((fn.type === 'FunctionDeclaration' || fn.type === 'FunctionExpression') && fn.id) return fn.id.name;
  const parent = fn.parent;
  let name;
  if (parent?.type === 'VariableDeclarator' && parent.init === fn && parent.id.type === 'Identifier') {
    name = parent.id.name;
  } else if (parent?.type === 'AssignmentExpression' && parent.right === fn) {
    const target = parent.left;
    if (target.type === 'Identifier') name = target.name;
    else if (target.type === 'MemberExpression') name = keyName(target.property, target.computed);
  } else if ((parent?.type === 'Property' || parent?.type === 'MethodDefinition') && parent.value === fn) {
    name = keyName(parent.key, parent.computed);
  } else if (parent?.type === 'PropertyDefinition' && parent.value === fn) {
    name = keyName(parent.key, parent.computed);
  }
  return name ?? `<anonymous>@${fn.loc?.start.line ?? 0}`;
}

/** @type {Map<string, { text: string, list: Exemption[] }>} */
const readLists = new Map();

/** The exemptions in `path` (read once per text of the file). @param {string} path */
export function readExemptions(path) {
  const text = readFileSync(path, 'utf8');
  const hit = readLists.get(path);
  if (hit?.text === text) return hit.list;
  const list = /** @type {unknown} */ (JSON.parse(text));
  const valid = (/** @type {any} */ e) =>
    e && typeof e.file === 'string' && typeof e.function === 'string' && Number.isInteger(e.lines);
  if (!Array.isArray(list) || !list.every(valid))
    throw new Error(`agentd/function-budget: ${path} must be a list of { file, function, lines }`);
  readLists.set(path, { text, list: /** @type {Exemption[]} */ (list) });
  return /** @type {Exemption[]} */ (list);
}

/** @type {import('eslint').Rule.RuleModule} */
const functionBudget = {
  meta: {
    type: 'suggestion',
    docs: { description: 'Functions have at most `max` lines of code; exemptions name functions and only shrink' },
    schema: [
      {
        type: 'object',
        properties: { root: { type: 'string' }, max: { type: 'integer', minimum: 0 }, exemptions: { type: 'string' } },
        required: ['root', 'max', 'exemptions'],
        additionalProperties: false,
      },
    ],
    messages: {
      tooLong:
        '{{name}} has {{lines}} lines of code; the budget is {{max}}. Extract well-named helpers (pure functions or small factories, in a file of their own when this one grows big)',
      grew: '{{name}} has {{lines}} lines of code, more than the {{recorded}} its exemption in {{list}} allows: exemptions only shrink. Extract helpers until it is back under {{recorded}} (better: under {{max}})',
      fits: '{{name}} fits the budget now ({{lines}} lines of code, budget {{max}}): take its exemption off {{list}}',
      stale:
        '{{list}} exempts {{name}} in {{file}}, but the file has no function of that name: take the exemption off the list',
    },
  },
  create(context) {
    const { root, max, exemptions } = /** @type {BudgetOptions} */ (context.options[0]);
    const listPath = resolve(root, exemptions);
    const list = relative(root, listPath).split('\\').join('/');
    const file = relative(root, context.filename).split('\\').join('/');
    /** @type {Map<string, number>} */
    const recorded = new Map();
    for (const e of readExemptions(listPath)) if (e.file === file) recorded.set(e.function, e.lines);
    const count = lineCounter(context.sourceCode);
    const seen = new Set();

    /** @param {Node} fn */
    const check = (fn) => {
      const measured = count(fn);
      if (!measured) return;
      const name = functionName(fn);
      seen.add(name);
      const allowed = recorded.get(name);
      const data = { name, lines: String(measured.lines), max: String(max), list };
      const node = /** @type {import('estree').Node} */ (measured.counted);
      if (allowed === undefined) {
        if (measured.lines > max) context.report({ node, messageId: 'tooLong', data });
      } else if (measured.lines > allowed) {
        context.report({ node, messageId: 'grew', data: { ...data, recorded: String(allowed) } });
      } else if (measured.lines <= max) {
        context.report({ node, messageId: 'fits', data });
      }
    };
    return {
      FunctionDeclaration: check,
      FunctionExpression: check,
      ArrowFunctionExpression: check,
      'Program:exit'(node) {
        for (const name of recorded.keys()) {
          if (!seen.has(name)) context.report({ node, messageId: 'stale', data: { name, file, list } });
        }
      },
    };
  },
};

export default functionBudget;
