/** How interpreters read their command line: flags (some with a value), then the script and its own arguments. */
import type { InterpreterSpec } from './interpreters.ts';

/** Whether `arg` (a flag) runs inline code or loads code for an interpreter read by `spec`. */
function isCodeFlag(spec: InterpreterSpec, arg: string): boolean {
  const name = arg.split('=')[0] ?? arg;
  if (spec.code.includes(name) || (name.length > 2 && spec.code.includes(name.toLowerCase()))) return true;
  if (spec.codePrefixes?.some((p) => name.startsWith(p))) return true;
  if (!spec.codeLetters || arg.startsWith('--')) return false;
  // A short cluster (`-pe`, `-le`, `-Bc`): letters up to the first one that takes a value.
  for (const ch of arg.slice(1)) {
    if (!/[a-zA-Z]/.test(ch)) return false;
    if (spec.codeLetters.includes(ch)) return true;
    if (spec.valuedLetters?.includes(ch)) return false;
  }
  return false;
}

/** Whether flag `arg` takes the next argument as its value. */
function takesNext(spec: InterpreterSpec, arg: string): boolean {
  if (arg.includes('=')) return false;
  if (spec.valued?.includes(arg)) return true;
  if (arg.startsWith('--') || !spec.valuedLetters) return false;
  const letters = arg.slice(1);
  for (let i = 0; i < letters.length; i++) {
    if (spec.valuedLetters.includes(letters[i] ?? '')) return i === letters.length - 1;
  }
  return false;
}

interface InterpreterArgs {
  /** Index of the first flag that runs or loads code. */
  codeAt?: number;
  /** Index of the script (absent: none, e.g. stdin or `python -m`). */
  scriptAt?: number;
  /** Index of a `-m module` flag (Python). */
  moduleAt?: number;
}

/** Reads an interpreter's command line the way the interpreter does: flags (and their values), then the script. */
export function readInterpreterArgs(spec: InterpreterSpec, args: readonly string[]): InterpreterArgs {
  let subcommand = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') return i + 1 < args.length ? { scriptAt: i + 1 } : {};
    if (arg === '-') return {};
    if (!arg.startsWith('-') && !(spec.plusFlags && arg.startsWith('+'))) {
      if (!subcommand && spec.codeSubcommands?.includes(arg)) return { codeAt: i };
      if (!subcommand && spec.subcommands?.includes(arg)) {
        subcommand = true;
        continue;
      }
      return { scriptAt: i };
    }
    if (isCodeFlag(spec, arg)) return { codeAt: i };
    if (spec.valuedLetters?.includes('m') && /^-[a-zA-Z]*m/.test(arg) && !arg.startsWith('--')) return { moduleAt: i };
    if (takesNext(spec, arg)) i++;
  }
  return {};
}
