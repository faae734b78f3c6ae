// The data steps of this release, by the migration each follows (data-step.ts says what a step is).
import { copyBillsStep, type CopyBillsOptions } from "./copy-bills.ts";
import type { DataSteps } from "./data-step.ts";

/** The migration that creates bill_rows (issue 32); its step copies the bills into it. */
export const BILL_ROWS_MIGRATION = "20261127200000_bill_rows";
/** The migration that puts the view `bills` over bill_rows. */
export const BILLS_VIEW_MIGRATION = "20261127200100_bills_view";

/** The steps of this release, `copy` tuning the bills' copy (tests make its batches small). */
export function dataSteps(copy: CopyBillsOptions = {}): DataSteps {
  return { [BILL_ROWS_MIGRATION]: copyBillsStep(copy) };
}
