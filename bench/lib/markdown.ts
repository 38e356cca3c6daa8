/** A markdown table: a head row, its rule, and the rows, with `|` in a cell escaped. */
export function markdownTable(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const escape = (cells: string[]) => cells.map((c) => c.replace(/\|/g, '\\|'));
  return [line(escape(head)), line(head.map(() => '---')), ...rows.map((r) => line(escape(r)))].join('\n');
}
