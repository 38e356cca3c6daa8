/** How the spawn policy reads interpreters' command lines. Tables only. */

export interface InterpreterSpec {
  /** Flags that run or load code before the script; `codeLetters` count anywhere in a short cluster (`-pe`). */
  code: readonly string[];
  codeLetters?: string;
  codePrefixes?: readonly string[];
  /** Flags that take the next argument as their value (so it is not the script). */
  valued?: readonly string[];
  /** Short letters that take the rest of their cluster, or the next argument, as a value. */
  valuedLetters?: string;
  /** Subcommands that may precede the script (`deno run x.ts`). */
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
