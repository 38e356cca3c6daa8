/**
 * The file operations of the JSONL record engine, behind a small port so that tests count syncs and make a write fail
 * (the default is node:fs). `open(path, 'a')` opens for appending, creating the file 0600; `'w'` creates or
 * truncates it (0600).
 */
import { open } from 'node:fs/promises';

export interface RecordFile {
  /** Writes every byte at the end of the file. */
  append(bytes: Buffer): Promise<void>;
  /** fdatasync: resolves once what was written is on the medium. */
  sync(): Promise<void>;
  truncate(size: number): Promise<void>;
  close(): Promise<void>;
}

export interface RecordFiles {
  open(path: string, how: 'a' | 'w'): Promise<RecordFile>;
}

export const nodeFiles: RecordFiles = {
  async open(path, how) {
    const fh = await open(path, how, 0o600);
    return {
      append: async (bytes) => {
        for (let off = 0; off < bytes.length;) off += (await fh.write(bytes, off, bytes.length - off)).bytesWritten;
      },
      sync: () => fh.datasync(),
      truncate: (size) => fh.truncate(size),
      close: () => fh.close(),
    };
  },
};
