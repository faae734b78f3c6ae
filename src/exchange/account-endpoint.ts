// GET /capi/v2/account/account?coinId= (spec 4.2): account settings, collateral and positions.
// The public docs show another form of the same read (account-public.ts); which one an exchange
// serves is learnt per account (streams/snapshots/account-forms.ts).
import { accountResponseSchema, type AccountResponse } from "./account-record.ts";
import { MalformedResponseError } from "./errors.ts";
import type { ExchangeClient, ResponseInfo } from "./http-client.ts";
import { describeIssues } from "./lossless-fields.ts";
import { isLosslessNumber, toStorable, type JsonValue } from "./lossless-json.ts";
import { PUBLIC_ACCOUNT_PATH } from "./account-public.ts";
import { ENDPOINT_WEIGHTS } from "./weights.ts";

export const ACCOUNT_PATH = "/capi/v2/account/account";

/** seed: GET /capi/v2/account/account?coinId= (the spec's); public: GET /capi/v2/account/getAccount?coin=. */
export type AccountForm = "seed" | "public";
export const ACCOUNT_FORMS: readonly AccountForm[] = ["seed", "public"];
export const ACCOUNT_FORM_PATHS: Readonly<Record<AccountForm, string>> = {
  seed: ACCOUNT_PATH,
  public: PUBLIC_ACCOUNT_PATH,
};

/** Both forms answered "not found": snapshots cannot be taken from this exchange as it is. */
export class AccountEndpointNotServedError extends Error {
  override name = "AccountEndpointNotServedError";
  constructor(seed: Error, pub: Error) {
    super(
      `neither ${ACCOUNT_PATH} nor ${PUBLIC_ACCOUNT_PATH} is served: ${seed.message}; ${pub.message} ` +
        "(check EXCHANGE_BASE_URL: it must be the exchange's contract API)",
    );
  }
}

/**
 * A body that is not a JSON object is a transport problem (retried by the client). A JSON object
 * whose content fails validation is the exchange's data: it is returned as rejected, with the exact
 * text and the reasons, so the caller can quarantine it and write nothing of it.
 */
export type AccountFetch =
  { ok: true; response: AccountResponse; raw: unknown } | { ok: false; reason: string; rawText: string };

export function fetchAccount(client: ExchangeClient, coinId: string, signal?: AbortSignal): Promise<AccountFetch> {
  return client.call({
    endpoint: "account",
    method: "GET",
    path: ACCOUNT_PATH,
    query: { coinId },
    weight: ENDPOINT_WEIGHTS.account,
    parse: parseAccountResponse,
    signal,
  });
}

export function parseAccountResponse(
  json: JsonValue,
  text: string,
  info: ResponseInfo = { invalidUtf8: false },
): AccountFetch {
  if (json === null || typeof json !== "object" || Array.isArray(json) || isLosslessNumber(json)) {
    throw new MalformedResponseError("account response is not a JSON object");
  }
  const o = json as { [key: string]: JsonValue };
  // Some deployments wrap payloads as {code, msg, data}; accept that shape too.
  const body = o.account === undefined && o.data && typeof o.data === "object" && !Array.isArray(o.data) ? o.data : o;
  // The whole response is one record: anything in it that cannot be stored exactly refuses all of it.
  if (info.invalidUtf8)
    return { ok: false, reason: "response is not valid UTF-8 (its bad bytes were replaced by U+FFFD)", rawText: text };
  const whole = toStorable(o, "response");
  if (!whole.ok) return { ok: false, reason: whole.reason, rawText: text };
  const parsed = accountResponseSchema.safeParse(body);
  if (!parsed.success) return { ok: false, reason: describeIssues(parsed.error, "response"), rawText: text };
  // What is stored is the record itself, without a {code, msg, data} wrapper.
  const raw = body === o ? whole.json : (whole.json as { data: unknown }).data;
  return { ok: true, response: parsed.data, raw };
}
