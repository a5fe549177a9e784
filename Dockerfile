# devicehub container image: build stage (compiler, dev dependencies) and a small runtime stage
# that runs as the unprivileged `node` user. Build: docker build -t devicehub .
# Run (SQLite in a volume): docker run -p 8080:8080 -v devicehub-data:/data devicehub
# Several instances on PostgreSQL: see compose.yaml.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# On Node 22+ the SQLite driver is Node's own node:sqlite: no native module, no compiler. npm
# skips devicehub-sqlite-node20 (the Node 20 driver, a native addon) here by its engines.
COPY package.json package-lock.json ./
COPY packages packages
RUN npm ci --ignore-scripts && npm rebuild esbuild
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY bin bin
# The web console is bundled at build time (scripts/build-console.mjs over console/).
COPY scripts scripts
COPY console console
# Compile, drop the dev dependencies, add the PostgreSQL driver (an optional peer dependency).
RUN npm run build \
  && npm prune --omit=dev \
  && npm install --omit=dev --no-save --ignore-scripts pg@^8.11.0 \
  && node --input-type=module -e "import { openSqliteStore } from './dist/lib/store/dialects/sqlite.js'; await (await openSqliteStore(':memory:')).close()"

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    DEVICEHUB_HOST=0.0.0.0 \
    DEVICEHUB_PORT=8080 \
    DEVICEHUB_DB=/data/devicehub.db \
    DEVICEHUB_LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json README.md LICENSE ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Readiness: the store answers (and on PostgreSQL the LISTEN connection is up).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.DEVICEHUB_PORT}${process.env.DEVICEHUB_BASE_PATH ?? '/api/rest'}/health/ready`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 and handles SIGTERM itself: pending long polls answer [] and the store closes.
ENTRYPOINT ["node", "dist/bin/devicehub.js"]
CMD ["serve"]
