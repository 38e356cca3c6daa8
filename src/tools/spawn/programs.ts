/**
 * What the spawn policy knows about programs: how to name them, which run code given inline or
 * preload it (interpreters, shells), which launch a package (`npx`), and which run another program
 * (wrappers). Tables only; the rules are in spawn-policy.ts (both modes) and spawn-allowlist.ts (shared).
 */
import { basename } from 'node:path';
import { AppError } from '../../errors/index.ts';

export type Reason =
  'nul_byte' | 'inline_code' | 'loader_env' | 'command_not_allowed' | 'wrapper_not_allowed' | 'script_outside';
/** A refusal: INVALID_REQUEST with the config path and the reason. */
export const refuse = (field: string, reason: Reason, message: string): AppError =>
  new AppError('INVALID_REQUEST', message, { field, reason });

/** The program's name as the policy sees it: file name, lower case, without `.exe` or a version (`python3.12` → `python`). */
export function programName(command: string): string {
  const name = basename(command)
    .toLowerCase()
    .replace(/\.(exe|cmd)$/, '');
  if (/^(python|pypy)[\d.]*$/.test(name)) return name.replace(/[\d.]+$/, '');
  return name.replace(/^nodejs$/, 'node').replace(/^ts-node(-[a-z-]+)?$/, 'ts-node');
}

/** Whether `command` is in `list`: by its path as written, or by file name for an entry without a `/`. */
export function listedIn(list: readonly string[], command: string): boolean {
  const program = programName(command);
  return list.includes(command) || list.some((a) => !a.includes('/') && programName(a) === program);
}

/** A flag's name without its `=value`. */
export const flagName = (arg: string): string => arg.split('=')[0]?.toLowerCase() ?? arg;

export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh', 'busybox']);
/** Short-flag clusters that carry `c` (`-c`, `-lc`, `-ec`): the shell runs the next argument as code. */
export const SHELL_CODE = /^-[a-zA-Z]*c[a-zA-Z]*$/;
export const SHELL_CODE_LONG = new Set(['--command', '--init-file', '--rcfile']);

/**
 * How an interpreter's command line reads: `code` are flags (long names, or short letters anywhere in a
 * cluster such as `-pe`) that run inline code or load code before the script; `valued` take the next
 * argument as their value (so it is not the script); `subcommands` may precede the script (`deno run x.ts`).
 */
export interface InterpreterSpec {
  code: readonly string[];
  codeLetters?: string;
  codePrefixes?: readonly string[];
  valued?: readonly string[];
  /** Short letters that take the rest of their cluster, or the next argument, as a value. */
  valuedLetters?: string;
  subcommands?: readonly string[];
  /** Subcommands that run inline code (`deno eval`), read where a subcommand may stand. */
  codeSubcommands?: readonly string[];
  /** `+o` and the like are flags too (shells). */
  plusFlags?: boolean;
}

const NODE_VALUED = [
  '--conditions',
  '--cpu-prof-dir',
  '--cpu-prof-interval',
  '--cpu-prof-name',
  '--diagnostic-dir',
  '--disable-proto',
  '--disable-warning',
  '--dns-result-order',
  '--experimental-default-type',
  '--heap-prof-dir',
  '--heap-prof-interval',
  '--heap-prof-name',
  '--heapsnapshot-near-heap-limit',
  '--heapsnapshot-signal',
  '--icu-data-dir',
  '--input-type',
  '--max-http-header-size',
  '--network-family-autoselection-attempt-timeout',
  '--redirect-warnings',
  '--report-dir',
  '--report-directory',
  '--report-filename',
  '--report-signal',
  '--secure-heap',
  '--secure-heap-min',
  '--test-concurrency',
  '--test-name-pattern',
  '--test-reporter',
  '--test-reporter-destination',
  '--test-shard',
  '--test-timeout',
  '--title',
  '--tls-cipher-list',
  '--tls-keylog',
  '--trace-event-categories',
  '--trace-event-file-pattern',
  '--unhandled-rejections',
  '--use-largepages',
  '--v8-pool-size',
  '--watch-path',
  '--allow-fs-read',
  '--allow-fs-write',
  '--policy-integrity',
  '--trace-require-module',
];

const NODE: InterpreterSpec = {
  code: [
    '-e',
    '--eval',
    '-p',
    '--print',
    '-r',
    '--require',
    '--import',
    '--loader',
    '--experimental-loader',
    '--env-file',
    '--env-file-if-exists',
    '-i',
    '--interactive',
    '--run',
    '--openssl-config',
    '--snapshot-blob',
    '--build-snapshot',
    '--build-snapshot-config',
    '--experimental-config-file',
    '--experimental-default-config-file',
    '--experimental-policy',
    '--experimental-sea-config',
  ],
  codeLetters: 'epri',
  codePrefixes: ['--inspect', '--debug'],
  valued: ['-C', ...NODE_VALUED],
  valuedLetters: 'C',
};

export const INTERPRETERS: Record<string, InterpreterSpec> = {
  node: NODE,
  // tsx reads node's flags (and passes them on), its own `--tsconfig`, and `tsx watch <script>`.
  tsx: { ...NODE, valued: [...(NODE.valued ?? []), '--tsconfig', '--include', '--exclude'], subcommands: ['watch'] },
  'ts-node': {
    code: [
      '-e',
      '--eval',
      '-p',
      '--print',
      '-r',
      '--require',
      '-i',
      '--interactive',
      '-C',
      '--compiler',
      '--transpiler',
    ],
    codeLetters: 'epriC',
    valued: [
      '-O',
      '--compilerOptions',
      '--compiler-options',
      '-P',
      '--project',
      '-D',
      '--ignoreDiagnostics',
      '--ignore-diagnostics',
      '-I',
      '--ignore',
      '--scopeDir',
      '--scope-dir',
      '--dir',
      '--cwd',
    ],
    valuedLetters: 'OPDI',
  },
  bun: {
    code: [
      '-e',
      '--eval',
      '-p',
      '--print',
      '-r',
      '--require',
      '--preload',
      '--import',
      '-c',
      '--config',
      '--env-file',
      '--cwd',
      '--filter',
      '-F',
    ],
    codePrefixes: ['--inspect'],
    valued: [
      '--tsconfig-override',
      '-d',
      '--define',
      '-l',
      '--loader',
      '--port',
      '--conditions',
      '--main-fields',
      '--extension-order',
      '--install',
    ],
    subcommands: ['run'],
  },
  deno: {
    code: ['--preload', '--require', '--import-map', '-c', '--config', '--env-file', '--cwd'],
    codePrefixes: ['--inspect'],
    valued: ['--location', '--cert', '--lock', '--seed', '--ext', '-L', '--log-level'],
    subcommands: ['run', 'serve'],
    codeSubcommands: ['eval', 'repl'],
  },
  python: { code: ['-c'], codeLetters: 'c', valued: ['-W', '-X', '--check-hash-based-pycs'], valuedLetters: 'WXmQ' },
  pypy: { code: ['-c'], codeLetters: 'c', valued: ['-W', '-X'], valuedLetters: 'WXmQ' },
  perl: { code: ['-e', '-E', '-M', '-m', '-I', '-d', '-S'], codeLetters: 'eEMmIdS', valuedLetters: 'FCix' },
  ruby: {
    code: ['-e', '-r', '-I', '-C', '-S', '--require'],
    codeLetters: 'erICS',
    valued: ['-E', '--encoding'],
    valuedLetters: 'EFKTWx0',
  },
  php: {
    code: ['-r', '-B', '-R', '-E', '-F', '-a', '-S', '-d', '-c', '-z', '--define', '--php-ini', '--zend-extension'],
    codeLetters: 'rBREFaSdcz',
    valued: ['-t', '-f'],
    valuedLetters: 't',
  },
  lua: { code: ['-e', '-l'], codeLetters: 'el' },
  osascript: { code: ['-e'] },
  pwsh: { code: ['-c', '-command', '-encodedcommand', '-ec'] },
  powershell: { code: ['-c', '-command', '-encodedcommand', '-ec'] },
  cmd: { code: ['/c', '/k'] },
};

/** Shells (when listed explicitly) read like interpreters: `-o`/`-O` take a value. */
export const SHELL_SPEC: InterpreterSpec = { code: [], valued: ['-o', '+o', '-O', '+O'], plusFlags: true };

/** Launchers that run the program named by their first non-flag argument; their own code flags. */
export const LAUNCHERS: Record<string, readonly string[]> = {
  npx: ['-c', '--call', '--script-shell', '--shell', '--node-options', '--userconfig', '--globalconfig'],
  bunx: [],
  pnpx: ['-c', '--shell-mode'],
  uvx: [],
  env: [],
};
/** `npm exec …`, `pnpm dlx …`, `yarn dlx …` launch like `npx`. */
export const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn']);
export const RUN_SUBCOMMANDS = new Set(['exec', 'x', 'dlx']);

/** npm's options that run a command of their own or load a config or preload naming one (`npm exec -c`, `pnpm dlx --shell-mode`). */
const NPM_CODE_OPTIONS = ['call', 'script-shell', 'shell', 'shell-mode', 'node-options', 'userconfig', 'globalconfig'];

/**
 * Whether `arg` is one of npm's code options as npm reads it: `-c` alone or in a cluster of short flags (`-yc`),
 * or a long option named in full or by a prefix of three letters or more (npm expands `--script-sh`).
 * npm (nopt) reads them anywhere before `--`, before or after the subcommand and the package.
 */
export function isNpmCodeFlag(arg: string): boolean {
  if (/^-[a-zA-Z?]*c[a-zA-Z?]*(=.*)?$/.test(arg)) return true;
  if (!arg.startsWith('--')) return false;
  const name = flagName(arg).slice(2);
  return NPM_CODE_OPTIONS.some(
    (option) => option === name || (name.length >= 3 && name !== 'global' && option.startsWith(name)),
  );
}

/**
 * Programs that run another program or code of their own choosing: a shared service starts them only
 * when `server.mcp.allowedCommands` lists them explicitly (shells, `env`, package managers outside
 * `exec`, build tools, container and privilege tools among them).
 */
export const WRAPPERS = new Set([
  ...SHELLS,
  'env',
  'timeout',
  'nice',
  'ionice',
  'setsid',
  'nohup',
  'stdbuf',
  'chrt',
  'taskset',
  'xargs',
  'parallel',
  'sudo',
  'doas',
  'su',
  'runuser',
  'pkexec',
  'flock',
  'script',
  'unshare',
  'nsenter',
  'chroot',
  'setpriv',
  'setarch',
  'prlimit',
  'systemd-run',
  'watch',
  'time',
  'strace',
  'ltrace',
  'gdb',
  'valgrind',
  'faketime',
  'firejail',
  'bwrap',
  'proot',
  'screen',
  'tmux',
  'expect',
  'start-stop-daemon',
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'sed',
  'find',
  'tar',
  'zip',
  'rsync',
  'ssh',
  'make',
  'git',
  'vi',
  'vim',
  'nvim',
  'ed',
  'less',
  'more',
  'man',
  'npm',
  'pnpm',
  'yarn',
  'uv',
  'pip',
  'pipx',
  'poetry',
  'gem',
  'bundle',
  'go',
  'cargo',
  'java',
  'dotnet',
  'mvn',
  'gradle',
  'docker',
  'podman',
  'kubectl',
  'tclsh',
  'wish',
  'rscript',
  'r',
  'julia',
  'osascript',
  'pwsh',
  'powershell',
  'cmd',
]);

/**
 * Interpreters whose script must be a package's declared bin or a file under the agent folder when the service
 * is shared: every interpreter but those a shared service treats as wrappers (`osascript`, `pwsh`, `cmd`, …).
 */
export const SCRIPT_INTERPRETERS: ReadonlySet<string> = new Set(
  Object.keys(INTERPRETERS).filter((p) => !WRAPPERS.has(p)),
);
