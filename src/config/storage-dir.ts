/**
 * Where a JSONL agent keeps its sessions when its file does not say (`storage.dir` unwritten): a folder of the user's
 * own, never one relative to a working folder the user did not choose (a desktop MCP client starts agentd in `/`).
 * - The per-user data folder: `$XDG_DATA_HOME/agentd` when XDG_DATA_HOME is set to an absolute path (any platform);
 *   else `~/Library/Application Support/agentd` on macOS, `%LOCALAPPDATA%\agentd` on Windows,
 *   `~/.local/share/agentd` elsewhere.
 * - In it, one folder per agent file, `<file name without .yml>-<8 hex of sha256 of its real path>/sessions`, so two
 *   agentds serving different files each work by default, and two serving one file meet at its storage lock.
 * - A working folder that already holds a non-empty `data/sessions` (the default before this one) keeps it, with a
 *   warning, so an existing install loses no sessions.
 */
import { createHash } from 'node:crypto';
import { readdirSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, extname, posix, resolve, win32 } from 'node:path';

/** The default before the per-user data folder, relative to the working folder. */
export const LEGACY_STORAGE_DIR = './data/sessions';

/** What the default depends on; each defaults to this process's own. */
export interface DataPlace {
  platform?: NodeJS.Platform;
  env?: NodeJS.ProcessEnv;
  home?: string;
  cwd?: string;
}

/** The sessions' folder chosen, and why: written in the file, the per-user data folder, or a legacy one kept. */
export interface StorageDirChoice {
  dir: string;
  from: 'config' | 'user-data' | 'legacy';
  /** With `legacy`: the folder of the per-user data folder that would be used without it. */
  userData?: string;
}

/** agentd's per-user data folder (absolute; not created here). */
export function userDataDir(place: DataPlace = {}): string {
  const platform = place.platform ?? process.platform;
  const env = place.env ?? process.env;
  const home = place.home ?? homedir();
  const path = platform === 'win32' ? win32 : posix;
  const xdg = env.XDG_DATA_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'agentd');
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'agentd');
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA;
    return path.join(local && path.isAbsolute(local) ? local : path.join(home, 'AppData', 'Local'), 'agentd');
  }
  return path.join(home, '.local', 'share', 'agentd');
}

/** The folder name of an agent file's data: its name without extension (safe characters only) and a short hash. */
export function agentDataName(agentFile: string): string {
  let real = resolve(agentFile);
  try {
    real = realpathSync(real); // one file by two spellings (a symlink) is one agent: the lock then refuses the second
  } catch {
    // not there (yet): its absolute path
  }
  const name =
    basename(real, extname(real))
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[.-]+/, '') || 'agent';
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 8);
  return `${name}-${hash}`;
}

/** Whether `dir` is a folder with anything in it. */
function hasContent(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/** The default sessions' folder of `agentFile` (see the module comment). */
export function defaultStorageDir(agentFile: string, place: DataPlace = {}): StorageDirChoice {
  const path = (place.platform ?? process.platform) === 'win32' ? win32 : posix;
  const userData = path.join(userDataDir(place), agentDataName(agentFile), 'sessions');
  const legacy = resolve(place.cwd ?? process.cwd(), LEGACY_STORAGE_DIR);
  return hasContent(legacy) ? { dir: legacy, from: 'legacy', userData } : { dir: userData, from: 'user-data' };
}
