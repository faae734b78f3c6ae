// Decimal arithmetic on NUMERIC values, exact. decimal.js rounds every result to `precision`
// significant digits, 20 by default: 1000.5 + 0.000000000123456789 would come out as
// 1000.5000000001234568. This clone allows the most digits decimal.js does, far past what NUMERIC
// holds, so no sum, difference or comparison of amounts, balances or fees is ever rounded. Every
// module doing money arithmetic imports Decimal from here, never from decimal.js
// (test/layers/exact-decimal.test.ts).
import { Decimal as DefaultDecimal } from "decimal.js";

export const Decimal = DefaultDecimal.clone({ precision: 1_000_000_000, rounding: DefaultDecimal.ROUND_HALF_EVEN });
export type Decimal = InstanceType<typeof Decimal>;
