-- The payload functions are STABLE, not IMMUTABLE: format(), to_json() and extract() over a
-- timestamptz are STABLE, and PostgreSQL inlines a SQL function into the query only when the
-- function is declared no less volatile than its body. Declared IMMUTABLE they ran through the
-- SQL-function executor once per bill (about 4.8 µs a bill against 0.3 µs inlined: `raw` and
-- `payload` of the bills view, the export and the window write's exactness check all paid it).
-- Nothing indexes either function, so IMMUTABLE bought nothing. docs/design/bill-storage.md.
ALTER FUNCTION "ledger_sync_json_inner"(text) STABLE;
ALTER FUNCTION "ledger_sync_payload"(text, numeric, text, text, text, numeric, numeric, numeric, timestamptz, text, text[]) STABLE;
