export * from './schema.ts';
export * from './load.ts';
export * from './export.ts';
export * from './shared.ts';
export * from './storage-dir.ts';
