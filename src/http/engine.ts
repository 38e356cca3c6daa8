import uWS from 'uWebSockets.js';

export { uWS };

/**
 * Which uWebSockets.js engine is loaded: the native addon, or the package's JS emulation that it
 * falls back to when no binary matches this Node build (or UWS_USE_FALLBACK is set).
 * Only the native addon exports the multipart parser, so its presence tells them apart.
 */
export const engine: 'native' | 'fallback' = typeof (uWS as { getParts?: unknown }).getParts === 'function' ? 'native' : 'fallback';
