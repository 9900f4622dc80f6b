# syntax=docker/dockerfile:1
# Build stage: install the packages, compile the native SQLite binding with the full toolchain,
# and build dist/ (src/ compiled, the web console bundled). test/dockerfile.test.ts replays these
# steps from exactly the files copied here, so a file the build reads but the image lacks fails CI.
FROM node:22-bookworm AS build
# Build better-sqlite3 against the image's own Node headers (under /usr/local) when no prebuilt
# binary can be downloaded; node-gyp reads this variable.
ENV npm_package_config_node_gyp_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# `npm ci` runs the prepare script (bin/build.mjs), which compiles src/ into dist/ and bundles
# console/ into dist/public/, reading tsconfig.json and console/tsconfig.json: all come first.
COPY bin ./bin
COPY src ./src
COPY console ./console
COPY tsconfig.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# Runtime stage: no compilers, no sources (bin/mailsvc runs dist/), an unprivileged user, data
# on a volume. tini is PID 1: it reaps orphaned children and passes SIGTERM on to the server, so
# `docker run` and compose need no --init.
FROM node:22-bookworm-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
COPY config ./config
RUN mkdir -p /app/data && chown -R node:node /app/data
USER node
VOLUME ["/app/data"]
# HTTP API 3000, SMTP submission 1587 (STARTTLS) and 1465 (implicit TLS), inbound MX 2525.
# Production maps the standard ports onto them: -p 25:2525 -p 587:1587 -p 465:1465, and 443 -> 3000 through a proxy.
EXPOSE 3000 1587 1465 2525
# Asks the API at the configured http.host/http.port (config file or MAILSVC_HTTP_PORT).
HEALTHCHECK --interval=30s --timeout=5s CMD ["node", "bin/mailsvc", "healthcheck", "--timeout", "4"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/mailsvc"]
CMD ["serve"]
