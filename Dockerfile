# syntax=docker/dockerfile:1
# Build stage: compile the native SQLite binding with the full toolchain.
FROM node:22-bookworm AS build
# Build better-sqlite3 against the image's own Node headers (under /usr/local) when no prebuilt
# binary can be downloaded; node-gyp reads this variable.
ENV npm_package_config_node_gyp_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# `npm ci` compiles src/ into dist/ (the prepare script, bin/build.mjs), so those come first.
COPY bin ./bin
COPY src ./src
RUN npm ci --omit=dev --no-audit --no-fund
COPY config ./config
COPY tsconfig.json ./

# Runtime stage: no compilers, an unprivileged user, data on a volume.
FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
RUN mkdir -p /app/data && chown -R node:node /app/data
USER node
VOLUME ["/app/data"]
# HTTP API 3000, SMTP submission 1587 (STARTTLS) and 1465 (implicit TLS), inbound MX 2525.
# Production maps the standard ports onto them: -p 25:2525 -p 587:1587 -p 465:1465, and 443 -> 3000 through a proxy.
EXPOSE 3000 1587 1465 2525
# Asks the API at the configured http.host/http.port (config file or MAILSVC_HTTP_PORT).
HEALTHCHECK --interval=30s --timeout=5s CMD ["node", "bin/mailsvc", "healthcheck", "--timeout", "4"]
ENTRYPOINT ["node", "bin/mailsvc"]
CMD ["serve"]
