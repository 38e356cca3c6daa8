import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentFile } from '../../src/config/load.ts';
import { agentDataName, defaultStorageDir, userDataDir } from '../../src/config/storage-dir.ts';

describe('the per-user data folder', () => {
  it('is $XDG_DATA_HOME/agentd, else ~/.local/share/agentd on Linux', () => {
    const home = '/home/ada';
    expect(userDataDir({ platform: 'linux', home, env: {} })).toBe('/home/ada/.local/share/agentd');
    expect(userDataDir({ platform: 'linux', home, env: { XDG_DATA_HOME: '/xdg' } })).toBe('/xdg/agentd');
    // The XDG spec: a relative value is ignored; so is an empty one.
    expect(userDataDir({ platform: 'linux', home, env: { XDG_DATA_HOME: 'rel/dir' } })).toBe(
      '/home/ada/.local/share/agentd',
    );
    expect(userDataDir({ platform: 'freebsd', home, env: { XDG_DATA_HOME: '' } })).toBe(
      '/home/ada/.local/share/agentd',
    );
  });

  it('is ~/Library/Application Support/agentd on macOS (XDG_DATA_HOME, when set, still wins)', () => {
    expect(userDataDir({ platform: 'darwin', home: '/Users/ada', env: {} })).toBe(
      '/Users/ada/Library/Application Support/agentd',
    );
    expect(userDataDir({ platform: 'darwin', home: '/Users/ada', env: { XDG_DATA_HOME: '/x' } })).toBe('/x/agentd');
  });

  it('is %LOCALAPPDATA%\\agentd on Windows, else the home folder’s AppData\\Local\\agentd', () => {
    const home = 'C:\\Users\\ada';
    expect(userDataDir({ platform: 'win32', home, env: { LOCALAPPDATA: 'D:\\Local' } })).toBe('D:\\Local\\agentd');
    expect(userDataDir({ platform: 'win32', home, env: {} })).toBe('C:\\Users\\ada\\AppData\\Local\\agentd');
  });
});

describe('the default storage folder of an agent file', () => {
  it('is <data>/<file name>-<hash of its path>/sessions, whatever the working folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-storage-dir-'));
    const [a, b] = [join(dir, 'a', 'agent.yml'), join(dir, 'b', 'agent.yml')];
    const env = { XDG_DATA_HOME: '/xdg' };
    const chosen = defaultStorageDir(a, { platform: 'linux', env, cwd: '/' });
    expect(chosen).toEqual({ dir: `/xdg/agentd/${agentDataName(a)}/sessions`, from: 'user-data' });
    expect(agentDataName(a)).toMatch(/^agent-[0-9a-f]{8}$/);
    expect(defaultStorageDir(a, { platform: 'linux', env, cwd: dir })).toEqual(chosen); // another working folder
    // Two files of one name are two agents; one file by another spelling (a symlink) is one.
    expect(agentDataName(b)).not.toBe(agentDataName(a));
    await mkdir(join(dir, 'a'));
    await writeFile(a, 'llm: { model: m }\n');
    await symlink(join(dir, 'a'), join(dir, 'link'));
    expect(agentDataName(join(dir, 'link', 'agent.yml'))).toBe(agentDataName(a));
    expect(agentDataName('/etc/My Agent.v2.yaml')).toMatch(/^My-Agent\.v2-[0-9a-f]{8}$/);
    expect(agentDataName('/etc/%%%.yml')).toMatch(/^agent-[0-9a-f]{8}$/);
  });

  it('is a non-empty ./data/sessions of the working folder when there is one (the former default)', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'agentd-legacy-'));
    const place = { platform: 'linux' as const, env: { XDG_DATA_HOME: '/xdg' }, cwd };
    await mkdir(join(cwd, 'data', 'sessions'), { recursive: true });
    expect(defaultStorageDir('/a/agent.yml', place).from).toBe('user-data'); // empty: nothing to keep
    await writeFile(join(cwd, 'data', 'sessions', 's1.jsonl'), '');
    expect(defaultStorageDir('/a/agent.yml', place)).toEqual({
      dir: join(cwd, 'data', 'sessions'),
      from: 'legacy',
      userData: `/xdg/agentd/${agentDataName('/a/agent.yml')}/sessions`,
    });
  });

  it('gives way to storage.dir written in the file, and is chosen only for jsonl', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentd-storage-load-'));
    const file = join(dir, 'agent.yml');
    const env = { XDG_DATA_HOME: join(dir, 'xdg') };
    await writeFile(file, 'llm: { provider: ollama, model: m }\n');
    expect(await loadAgentFile(file, env, { cwd: '/' })).toMatchObject({
      config: { storage: { type: 'jsonl', dir: join(dir, 'xdg', 'agentd', agentDataName(file), 'sessions') } },
      storage: { from: 'user-data' },
    });
    await writeFile(file, 'llm: { provider: ollama, model: m }\nstorage: { type: jsonl, dir: ./mine }\n');
    expect(await loadAgentFile(file, env, { cwd: '/' })).toMatchObject({
      config: { storage: { dir: join(dir, 'mine') } },
      storage: { dir: join(dir, 'mine'), from: 'config' },
    });
    await writeFile(file, 'llm: { provider: ollama, model: m }\nstorage: { type: memory }\n');
    expect((await loadAgentFile(file, env)).storage).toBeUndefined();
  });
});

describe('the test run', () => {
  it('has a per-user data folder of its own (test/support/user-data-untouched.ts), never the user’s', () => {
    expect(userDataDir()).toMatch(/agentd-user-data-[^/]+\/agentd$/);
  });
});
