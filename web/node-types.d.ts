// The server's record types that the pages import (src/tools/messages.ts) reach the config schema,
// which imports `isIP` from node:net. The pages never run it; this names it for the type-checker
// only, so the browser's types stay free of Node's globals.
declare module 'node:net' {
  export function isIP(input: string): number;
}
