// Which form of the account read to ask (issue 26). The exchange's public docs show
// /capi/v2/account/getAccount?coin=; the seed reads /capi/v2/account/account?coinId=. A coin is asked
// in the form the account's exchange answered last (exchange_profiles), else in the seed's. A "not
// found" on one form tries the other once; the form that answered is recorded, so the next run asks
// it first. Both not found is a named failure, never a loop.
import type { Logger } from "pino";
import {
  AccountEndpointNotServedError,
  ACCOUNT_FORM_PATHS,
  type AccountForm,
} from "../../exchange/account-endpoint.ts";
import type { AccountSnapshotFetch } from "../../exchange/account-record.ts";
import { isNotServed } from "../../exchange/not-served.ts";

export interface AccountFormsDeps {
  /** The form recorded for the account; null: none learnt. */
  known: AccountForm | null;
  fetch: Readonly<Record<AccountForm, (coinId: string) => Promise<AccountSnapshotFetch>>>;
  /** Records the form that answered (called only when it differs from what is recorded). */
  record: (form: AccountForm) => Promise<void>;
  logger: Logger;
}

const OTHER: Readonly<Record<AccountForm, AccountForm>> = { seed: "public", public: "seed" };

export class AccountForms {
  private current: AccountForm | null;

  constructor(private readonly deps: AccountFormsDeps) {
    this.current = deps.known;
  }

  /** The form recorded now (after any learning of this run). */
  get form(): AccountForm | null {
    return this.current;
  }

  async fetch(coinId: string): Promise<AccountSnapshotFetch & { form: AccountForm }> {
    const first = this.current ?? "seed";
    let form = first;
    let fetched: AccountSnapshotFetch;
    try {
      fetched = await this.deps.fetch[first](coinId);
    } catch (err) {
      if (!isNotServed(err)) throw err;
      form = OTHER[first];
      this.deps.logger.warn(
        { coinId, notServed: ACCOUNT_FORM_PATHS[first], trying: ACCOUNT_FORM_PATHS[form] },
        "the exchange does not serve this form of the account read; trying the other",
      );
      try {
        fetched = await this.deps.fetch[form](coinId);
      } catch (second) {
        if (!isNotServed(second)) throw second;
        const [seed, pub] = first === "seed" ? [err, second] : [second, err];
        throw new AccountEndpointNotServedError(seed, pub);
      }
    }
    if (form !== this.current) {
      await this.deps.record(form);
      this.deps.logger.info({ form, path: ACCOUNT_FORM_PATHS[form] }, "account read form learnt and recorded");
      this.current = form;
    }
    return { ...fetched, form };
  }
}
