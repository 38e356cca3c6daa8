/** Paths of the reference MCP servers and fixtures the tests start. */
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export const EVERYTHING = `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const FILESYSTEM = `${root}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
export const fixturePath = (name: string): string => `${root}test/fixtures/mcp/${name}.js`;
