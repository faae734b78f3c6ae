# ledger-sync worker image. Runs the TypeScript sources through tsx (no build step), like `npx ledger-sync`.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY . .
# npm ci runs `prepare` (prisma generate); dev dependencies are only for tests and benchmarks.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
USER node
EXPOSE 9464
ENTRYPOINT ["node", "bin/ledger-sync.js"]
CMD ["worker"]
