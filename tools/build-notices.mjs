// The licences of the packages bundled into dist/ (tools/build.mjs): each package whose files esbuild put into a
// bundle, with its version, its licence's name and the text of its licence file, as their licences ask of a copy.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The folder of the package a bundled input belongs to (`node_modules/<name>` or `node_modules/@scope/<name>`). */
function packageDirOf(input) {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const [first, second] = input.slice(at + 'node_modules/'.length).split('/');
  return input.slice(0, at) + 'node_modules/' + (first.startsWith('@') ? `${first}/${second}` : first);
}

/** Writes `file`: one section per bundled package, by name. */
export function writeThirdPartyNotices(metafile, file) {
  const byId = new Map();
  for (const dir of new Set(Object.keys(metafile.inputs).map(packageDirOf).filter(Boolean))) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const licenceFile = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = licenceFile ? readFileSync(join(dir, licenceFile), 'utf8').trim() : undefined;
    const id = `${manifest.name}@${manifest.version}`; // one section for copies of a version in several folders
    byId.set(id, { id, licence: manifest.license ?? 'see its package', text });
  }
  const sections = [...byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  const body = sections.map(({ id, licence, text }) =>
    [`## ${id}`, '', `Licence: ${licence}`, ...(text ? ['', '```', text, '```'] : [])].join('\n'),
  );
  writeFileSync(
    file,
    `# Third-party notices\n\nagentd's compiled entries (dist/src/cli.js, dist/tools/demo/main.js and their chunks) include these packages.\n\n${body.join('\n\n')}\n`,
  );
}
