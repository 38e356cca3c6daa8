/** An image a caller sends with a message, checked before it reaches the model (every face alike). */
import { AppError } from '../errors/index.ts';
import type { ImagePart } from './model-messages.ts';

/** Largest decoded image accepted (the spec's 10 MB upload limit). */
const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The image types recognised from their first bytes when `mimeType` is not given. */
const SIGNATURES: { mimeType: string; matches: (b: Buffer) => boolean }[] = [
  {
    mimeType: 'image/png',
    matches: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { mimeType: 'image/jpeg', matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mimeType: 'image/gif', matches: (b) => ['GIF87a', 'GIF89a'].includes(b.toString('latin1', 0, 6)) },
  {
    mimeType: 'image/webp',
    matches: (b) => b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
  },
];

/** The MIME type of an image from its first bytes (PNG, JPEG, GIF, WebP), or undefined. */
export function sniffImageType(bytes: Buffer): string | undefined {
  return SIGNATURES.find((s) => s.matches(bytes))?.mimeType;
}

/** An image of a message checked (valid base64, an image MIME type or one sniffed, at most 10 MB); `field` names it in errors. */
export function validateImage(
  image: { base64?: string | undefined; mimeType?: string | undefined },
  field = 'imageData',
): ImagePart {
  const fail = (issue: string) => new AppError('INVALID_REQUEST', `Invalid ${field}: ${issue}`, { field, issue });
  if (image.base64 === undefined)
    throw new AppError('MISSING_FIELD', `Missing required field: ${field}.base64`, { field: `${field}.base64` });
  if (image.mimeType !== undefined && !/^image\/[a-z0-9.+-]+$/i.test(image.mimeType))
    throw fail(`mimeType "${image.mimeType}" is not an image type`);
  const b64 = image.base64.replace(/\s+/g, '');
  if (b64.length === 0 || b64.length % 4 !== 0 || !BASE64.test(b64)) throw fail('base64 is not valid base64');
  const bytes = (b64.length / 4) * 3 - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0);
  if (bytes > MAX_IMAGE_BYTES) throw fail(`image is ${bytes} bytes; the limit is ${MAX_IMAGE_BYTES}`);
  const mimeType = image.mimeType ?? sniffImageType(Buffer.from(b64.slice(0, 24), 'base64'));
  if (mimeType === undefined) throw fail('mimeType is missing and the bytes are not PNG, JPEG, GIF or WebP');
  return { mimeType: mimeType.toLowerCase(), base64: b64 };
}
