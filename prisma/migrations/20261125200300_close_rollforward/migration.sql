-- Issue 26: the roll-forward of a closed period, and the reason given for closing one that is not
-- tied (`ledger-sync close --accept-untied`), documented in docs/schema.md ("Closed periods").

-- AlterTable
ALTER TABLE "period_closes" ADD COLUMN     "rollforward" JSONB,
ADD COLUMN     "untied_reason" TEXT;


-- ---- Hand-written (Prisma's schema language has no CHECK constraints) ----

-- A reason is words, not blanks; a close whose roll-forward is not tied carries one: never a silent
-- plug. Closes made before the roll-forward existed have neither (both NULL).
ALTER TABLE "period_closes" ADD CONSTRAINT "period_closes_untied_reason_given"
  CHECK ("untied_reason" IS NULL OR btrim("untied_reason") <> '');
ALTER TABLE "period_closes" ADD CONSTRAINT "period_closes_untied_accepted"
  CHECK ("rollforward" IS NULL OR "rollforward"->>'status' = 'tied' OR "untied_reason" IS NOT NULL);
