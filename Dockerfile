# agentd as a container image (docs/deployment.md, "Container image").
#
#   docker build -t agentd-server .
#   docker run -d -p 127.0.0.1:3001:3001 -v agentd-data:/data \
#     -e AGENTD_API_KEY=<16+ characters> -e OPENAI_API_KEY=sk-... agentd-server
#
# NODE_IMAGE is the Node base of both stages. The default, Debian 13 (trixie, glibc 2.41), runs the
# native uWebSockets.js engine; an older glibc falls back to the node:http engine. tools/ci/image.sh
# passes a base it makes locally.
ARG NODE_IMAGE=node:24-trixie-slim

# ---- build: compile, pack, and install the packed tarball's production dependencies from the lock file
FROM ${NODE_IMAGE} AS build
ENV npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the root `dependencies` script would build before the sources are here (the
# next step builds); no dependency needs its install script to build or run agentd.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build \
 && npm pack --ignore-scripts --pack-destination /tmp \
 && mkdir /app \
 && tar -xzf /tmp/agentd-server-*.tgz -C /app --strip-components=1 --no-same-owner \
 && cp package-lock.json /app/ \
 && cd /app \
 && npm ci --omit=dev --ignore-scripts --prefer-offline \
 && node bin/agentd.js --version

# ---- runtime: compiled JS and production dependencies, run as an unprivileged user
FROM ${NODE_IMAGE}
# XDG_DATA_HOME=/data: an agent file mounted without storage.dir keeps its sessions in the volume too
# (/data/agentd/<file name>-<hash>/sessions), not in the user's home.
ENV NODE_ENV=production \
    XDG_DATA_HOME=/data \
    AGENTD_LLM_PROVIDER=openai \
    AGENTD_LLM_BASE_URL=https://api.openai.com/v1 \
    AGENTD_LLM_MODEL=gpt-4o-mini \
    AGENTD_LLM_API_KEY= \
    AGENTD_SYSTEM_PROMPT="You are a helpful assistant."
# tini as PID 1: forwards SIGTERM to agentd (which shuts down gracefully) and reaps orphaned
# grandchildren of tool-server processes.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && groupadd --system --gid 10001 agentd \
 && useradd --system --uid 10001 --gid agentd --create-home --home-dir /home/agentd --shell /usr/sbin/nologin agentd \
 && mkdir -p /data/sessions \
 && chown -R agentd:agentd /data
# The application stays owned by root: the service can write only /data and its home.
COPY --from=build /app /opt/agentd
COPY docker/agent.yml docker/agent-redis.yml /etc/agentd/
RUN ln -s /opt/agentd/bin/agentd.js /usr/local/bin/agentd
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 3001
# Liveness: the process answers (the probes need no API key). node's fetch, as slim images have no
# curl. AGENTD_HEALTH_URL points it elsewhere (another --web-port).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.AGENTD_HEALTH_URL||'http://127.0.0.1:3001/api/health/live',{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["tini", "--", "agentd"]
CMD ["--agent", "/etc/agentd/agent.yml"]
