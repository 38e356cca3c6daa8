/** The client as a browser page loads it: src/client bundled by esbuild for the browser, minified. */
import { build, type Format } from 'esbuild';
import { ROOT } from './paths.ts';

export interface ClientBundle {
  code: string;
  /** The files bundled, from the checkout's root. */
  inputs: string[];
}

/** `iife`: a classic script that sets `globalThis.agentd` to the module's exports. */
export async function bundleClient(format: Format = 'esm'): Promise<ClientBundle> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/client/index.ts'],
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format,
    ...(format === 'iife' && { globalName: 'agentd' }),
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]?.text ?? '', inputs: Object.keys(result.metafile.inputs) };
}
