#!/usr/bin/env bash
# npm run bench:engines: the same benchmarks on both HTTP engines, node:http and uWebSockets.js, for issue 41's
# "node:http within 1.5× of uWebSockets.js". The native engine needs glibc ≥ 2.38, so both run in the Debian 13
# root of tools/ci/debian13-native.sh (same root, same Node, one after the other); each engine's results go to
# bench/results/engines/<engine>/ and the README's results section gets the side-by-side table.
#
#   npm run build && sudo npm run bench:engines                                  # streaming-200, chunks, rest, turns
#   BENCH_ENGINES_ONLY=turns BENCH_ENGINES_NODE=22 sudo npm run bench:engines    # a subset, another Node line
#
# Needs what the root needs (root, mmdebstrap, the npm registry and a Debian mirror; ~2 min the first time).
set -euo pipefail
cd "$(dirname "$0")/.."
only=${BENCH_ENGINES_ONLY:-streaming-200,chunks,rest,turns}
node_line=${BENCH_ENGINES_NODE:-20}
[ -f dist/src/cli.js ] || { echo "bench:engines: run npm run build first" >&2; exit 2; }
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain -- src machines)" ] || commit+=+dirty
for engine in node uws; do
  bash tools/ci/debian13-native.sh --node "$node_line" --engine "$engine" --exec -- \
    env BENCH_COMMIT="$commit" npx tsx bench/run.ts --only "$only" --engine-set "$engine"
done
npx tsx bench/run.ts --report
