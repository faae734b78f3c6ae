// The bills stream's name: its rows, its runs and its incremental cursor (sync_state) are stored
// under it, whichever source (v2 or v3) reads the bills, so an account can switch source and back.
export const BILLS_STREAM = "bills";
