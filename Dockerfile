# ledger-sync worker image. Runs the compiled build (dist/), like `npx ledger-sync` after `npm ci`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY . .
# npm ci runs `prepare`: prisma generate, then the tsc build into dist/ (scripts/build.js). The
# compiler is a dev dependency, so they are installed for the build and pruned in the same layer:
# the image keeps only the runtime dependencies.
RUN npm ci --include=dev --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund && npm cache clean --force
USER node
EXPOSE 9464
# Executed as a file, so that its first line gives node its start-up options and environment
# (bin/ledger-sync.js).
ENTRYPOINT ["/app/bin/ledger-sync.js"]
CMD ["worker"]
