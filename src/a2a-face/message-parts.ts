/**
 * A caller's message as the agent takes it: its text parts joined, its data parts (answers to what a task waits
 * for) and at most one image, bytes inline, its media type named or sniffed, checked like REST's `imageData`
 * (what is refused, with which code: docs/a2a.md, "Files").
 */
import { z } from 'zod';
import { sniffImageType, validateImage } from '../conversation/image-data.ts';
import type { ImagePart } from '../conversation/model-messages.ts';
import { AppError, isAppError } from '../errors/index.ts';

const partSchema = z.looseObject({
  kind: z.string().optional(),
  text: z.string().optional(),
  data: z.unknown().optional(),
  raw: z.string().optional(),
  url: z.string().optional(),
  mediaType: z.string().optional(),
  file: z
    .looseObject({ bytes: z.string().optional(), uri: z.string().optional(), mimeType: z.string().optional() })
    .optional(),
});
export const partsSchema = z.array(partSchema).max(64);
type Part = z.output<typeof partSchema>;

/** ProtoJSON bytes may be URL-safe base64 without padding; the model takes the standard form. */
const standardBase64 = (b64: string): string => {
  const plain = b64.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  return plain.padEnd(Math.ceil(plain.length / 4) * 4, '=');
};

/** The image of file part `field`, or the refusal of the file. */
function imageOf(part: Part, field: string): ImagePart {
  const named = part.mediaType || part.file?.mimeType || undefined;
  const url = part.url ?? part.file?.uri;
  if (url !== undefined)
    throw new AppError(
      'UNSUPPORTED_OPERATION',
      `${field}: files by URL are not fetched; send the image's bytes inline (raw)`,
      { field, ...(named && { mediaType: named }) },
    );
  const bytes = part.raw ?? part.file?.bytes;
  if (bytes === undefined)
    throw new AppError('MISSING_FIELD', `Invalid params: ${field}: a file part holds bytes or a URL`, { field });
  const base64 = standardBase64(bytes);
  const mediaType = (named ?? sniffImageType(Buffer.from(base64.slice(0, 24), 'base64')))?.toLowerCase();
  if (!mediaType?.startsWith('image/'))
    throw new AppError(
      'CONTENT_TYPE_NOT_SUPPORTED',
      `${field}: media type "${mediaType ?? '(none)'}" is not supported; file parts may be images (image/*)`,
      { field, mediaType: mediaType ?? null },
    );
  try {
    return validateImage({ base64, mimeType: mediaType }, field);
  } catch (err) {
    throw isAppError(err) ? new AppError('MISSING_FIELD', `Invalid params: ${err.message}`, err.details) : err;
  }
}

export function contentOf(parts: readonly Part[]) {
  const texts: string[] = [];
  const data: unknown[] = [];
  let image: ImagePart | undefined;
  parts.forEach((p, i) => {
    const field = `message.parts[${i}]`;
    if (typeof p.text === 'string') texts.push(p.text);
    else if (p.data !== undefined) data.push(p.data);
    else if (p.raw !== undefined || p.url !== undefined || p.file !== undefined) {
      if (image)
        throw new AppError('MISSING_FIELD', `Invalid params: ${field}: a message carries one image`, { field });
      image = imageOf(p, field);
    } else
      throw new AppError('MISSING_FIELD', `Invalid params: ${field}: a part holds text, data or a file`, { field });
  });
  return { text: texts.join('\n'), data, ...(image && { image }) };
}
