#!/usr/bin/env bash
# The packed tarball as a user gets it: `npm pack`, a global install into a temporary prefix (no
# install-script warning for agentd-server, no @scarf/scarf in the tree), then from a folder outside
# the checkout `agentd --version`, `agentd init` (the file validates: the service starts on it) and
# `agentd demo` (the demo agent answers its scripted messages). Uses the `node` first on PATH.
# test/int/package.test.ts checks the same and more inside `npm test`.
#
#   tools/ci/package-smoke.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/agentd-smoke.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== npm pack (Node $(node --version))"
tarball=$(cd "$ROOT" && npm pack --silent --pack-destination "$work" | tail -n 1)
echo "   $tarball: $(tar -tzf "$work/$tarball" | wc -l) files"

echo "== npm install --global into $work/prefix"
npm install --global --prefix "$work/prefix" --prefer-offline --no-audit --no-fund "$work/$tarball" 2>&1 | tee "$work/install.log"
# npm 11 warns of each install script allowScripts does not cover: none may be agentd's or a telemetry package's.
if grep -E 'install-scripts|allowScripts' "$work/install.log" | grep -E 'agentd|@scarf/scarf'; then
  echo "the global install warns of install scripts of the package" >&2; exit 1
fi
tree=$(npm ls --global --prefix "$work/prefix" --all --parseable 2>/dev/null || true)
grep -q '/node_modules/ws$' <<<"$tree" || { echo "npm ls listed no tree: $tree" >&2; exit 1; }
if grep -E '/node_modules/(@scarf/scarf|swagger-ui-dist)$' <<<"$tree"; then
  echo "the global install holds swagger-ui-dist or @scarf/scarf" >&2; exit 1
fi
export PATH="$work/prefix/bin:$PATH"
mkdir "$work/home" && cd "$work/home"

echo "== agentd --version"
agentd --version

echo "== agentd init"
agentd init --provider ollama
agentd --web-port 0 >"$work/serve.log" 2>&1 &
pid=$!
# The file validates when the service gets as far as "agent ready" (it stays up until stopped).
for _ in $(seq 1 600); do
  grep -q '"agent ready"' "$work/serve.log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log"; echo "agentd exited on the file agentd init wrote" >&2; exit 1; }
  sleep 0.1
done
grep -q '"agent ready"' "$work/serve.log" || { cat "$work/serve.log"; echo "agentd did not get ready in 60 s" >&2; exit 1; }
grep -o '"msg":"listening on[^"]*"' "$work/serve.log"
kill -TERM "$pid" && wait "$pid"

echo "== agentd demo"
AGENTD_DEMO_EXIT=1 AGENTD_DEMO_PORT=0 AGENTD_DEMO_SIM_PORT=0 AGENTD_DEMO_TOKENS_PER_SEC=0 AGENTD_DEMO_DATA="$work/demo" NO_COLOR=1 \
  agentd demo | tee "$work/demo.log" | grep -E 'MCP server|agent ›|\[response\]'
grep -q 'demo finished' "$work/demo.log"
echo "== package smoke passed"
