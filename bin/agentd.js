#!/usr/bin/env node
// The `agentd` command: runs the TypeScript entry (src/cli.ts) through tsx, from any folder.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
