/**
 * The commands of README.md's Install and Set up sections, read from the README itself (tools/ci/readme-lines.ts
 * runs them as written): every line of their shell code blocks (```sh, bash, shell, console), with its line number
 * in the file. A line ending in `\` continues on the next; blank lines and lines that are only a comment are not
 * commands. A section that is missing or has no command is an error, so a restructured README cannot empty the run.
 */

/** The sections whose commands CI runs: the headings (level 2) they start with. */
export const README_SECTIONS = ['Install', 'Set up'] as const;

const SHELL_FENCE = /^```(sh|bash|shell|console|zsh)\s*$/;

export interface ReadmeCommand {
  /** The heading of its section. */
  section: string;
  /** The line of README.md it starts on (1-based). */
  line: number;
  /** As written (continued lines joined with a newline). */
  command: string;
}

/** The commands of `sections` in `markdown`, in the order they are written. */
export function readmeCommands(markdown: string, sections: readonly string[] = README_SECTIONS): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  const counts = new Map<string, number>();
  let section: { name: string; heading: string } | undefined;
  let fence: 'shell' | 'other' | undefined;
  let pending: ReadmeCommand | undefined;
  markdown.split('\n').forEach((text, i) => {
    if (fence === undefined && text.startsWith('## ')) {
      const heading = text.slice(3).trim();
      const name = sections.find((s) => heading.startsWith(s));
      section = name === undefined ? undefined : { name, heading };
      if (name !== undefined) counts.set(name, counts.get(name) ?? 0);
      return;
    }
    if (text.startsWith('```')) {
      fence = fence === undefined ? (SHELL_FENCE.test(text) ? 'shell' : 'other') : undefined;
      return;
    }
    if (fence !== 'shell' || section === undefined) return;
    if (pending) pending.command += `\n${text}`;
    else if (text.trim() === '' || text.trim().startsWith('#')) return;
    else pending = { section: section.heading, line: i + 1, command: text };
    if (text.endsWith('\\')) return;
    commands.push(pending);
    pending = undefined;
    counts.set(section.name, counts.get(section.name)! + 1);
  });
  for (const name of sections) {
    if (!counts.has(name)) throw new Error(`README.md has no section "## ${name}…"`);
    if (counts.get(name) === 0) throw new Error(`README.md's section "## ${name}…" has no command in a shell block`);
  }
  return commands;
}
