export * from './bus.ts';
export * from './envelope.ts';
