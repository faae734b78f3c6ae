// The accounts page's address: ?q=<text in the name>&state=<failing|stale|fresh|disabled>&page=<n>,
// each optional, PAGE_SIZE accounts a page. A bad value is a 400 naming the parameter. Links are
// built here too, so every link of the page keeps the other parameters.
import { FLEET_STATES, type FleetState } from "../store/accounts/overview.ts";
import { badRequest } from "./headers.ts";

export const PAGE_SIZE = 50;
/** Account names are at most 64 characters: a longer search can match nothing. */
const MAX_SEARCH = 64;

export interface AccountsQuery {
  search: string | undefined;
  state: FleetState | undefined;
  /** 1-based. */
  page: number;
}

const one = (name: string, value: unknown): string | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw badRequest(`${name} must be given once, as text`);
  return value;
};

export function accountsQuery(query: { q?: unknown; state?: unknown; page?: unknown }): AccountsQuery {
  const q = one("q", query.q)?.trim();
  if (q !== undefined && q.length > MAX_SEARCH)
    throw badRequest(`q must be at most ${MAX_SEARCH} characters (account names are no longer)`);
  const state = one("state", query.state);
  if (state !== undefined && state !== "" && !(FLEET_STATES as readonly string[]).includes(state))
    throw badRequest(`state must be one of ${FLEET_STATES.join(", ")} (got ${JSON.stringify(state)})`);
  const page = one("page", query.page);
  if (page !== undefined && !/^[1-9][0-9]{0,5}$/.test(page))
    throw badRequest(`page must be a whole number from 1 to 999999 (got ${JSON.stringify(page)})`);
  return {
    search: q === "" ? undefined : q,
    state: state === "" ? undefined : (state as FleetState | undefined),
    page: page === undefined ? 1 : Number(page),
  };
}

/** The accounts page's address for `q`, with `change` applied (undefined drops a parameter). */
export function accountsHref(base: string, q: AccountsQuery, change: Partial<AccountsQuery> = {}): string {
  const next = { ...q, ...change };
  const params = new URLSearchParams();
  if (next.search !== undefined) params.set("q", next.search);
  if (next.state !== undefined) params.set("state", next.state);
  if (next.page !== 1) params.set("page", String(next.page));
  const search = params.toString();
  return `${base}/${search ? `?${search}` : ""}`;
}
