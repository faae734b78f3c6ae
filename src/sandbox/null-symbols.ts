// Switch `nullSymbols`: how the `symbol` of a bill of no contract is written. In the model such a
// bill (a deposit, withdrawal, transfer_in or transfer_out in a generated history) has symbol "".
// The v2 bills endpoint sends it as "" (the spec's sample), or as null with the switch on, as the
// live exchange does. The v3 income endpoint sends null whatever the switch: public sources show it
// so (README "v3 ledger endpoint (income)"). Any other symbol goes as its JSON string.

/** The JSON text of a bill's symbol on the v2 bills endpoint. */
export function billsSymbolJson(symbol: string, nullSymbols: boolean): string {
  return symbol === "" && nullSymbols ? "null" : JSON.stringify(symbol);
}

/** The JSON text of a bill's symbol on the v3 income endpoint. */
export function incomeSymbolJson(symbol: string): string {
  return symbol === "" ? "null" : JSON.stringify(symbol);
}
