/** Paths of the reference MCP servers and fixtures the tests start. */
import { fileURLToPath } from 'node:url';

/** The repository root, with a trailing slash. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The `agentd` command as installed users run it: the compiled service (dist/, kept current by test/support/built-dist.ts). */
export const AGENTD_BIN = `${ROOT}bin/agentd.js`;

export const EVERYTHING = `${ROOT}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const FILESYSTEM = `${ROOT}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
export const fixturePath = (name: string): string => `${ROOT}test/fixtures/mcp/${name}.js`;
