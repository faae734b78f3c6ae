// What the run learns of the exchange that changes how its pages are read is said once, as a
// warning: it explains why the run then asks more than usual (the profile tells, this words it).
import type { Logger } from "pino";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";

export function warnOfProfileLessons(profile: ExchangeProfile, logger: Logger): void {
  profile.events.onHasNextPageLie = ({ itemCount, largestBefore }) => {
    logger.warn(
      { itemCount, largestBefore },
      "the exchange sent hasNextPage: true on a page it did not fill (after serving a larger one): " +
        "the field does not say whether more bills exist, so pages count as full by their item count alone",
    );
  };
  profile.events.onFilterOffset = (offsetMs, billId) => {
    logger.warn(
      { offsetMs, billId },
      "the exchange returned a bill whose time lies outside the range asked: it filters on another time; " +
        "such bills are kept, and bound inclusivity is no longer relied on",
    );
  };
}
