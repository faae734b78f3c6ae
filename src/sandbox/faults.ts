// Injected faults: the failure modes a client meets in front of a real exchange (rate limiting,
// an HTML error page from a proxy, a stalled or cut-off answer, a reset connection). Decided
// per request with a seeded PRNG before normal handling; they consume no weight.
import { Prng } from "./prng.ts";
import { ALL_FAULT_KINDS, type FaultConfig, type FaultKind } from "./types.ts";

export class FaultInjector {
  private readonly rng: Prng;
  private rate = 0;
  private kinds: FaultKind[] = [...ALL_FAULT_KINDS];
  private order: "random" | "cycle" = "random";
  private next = 0;

  constructor(seed: number, config: FaultConfig | undefined) {
    this.rng = new Prng(seed, "faults");
    if (config !== undefined) this.set(config);
  }

  set(config: FaultConfig): void {
    if (!(config.rate >= 0 && config.rate <= 1))
      throw new Error(`sandbox: fault rate must be within 0..1, got ${config.rate}`);
    const kinds = config.kinds ?? [...ALL_FAULT_KINDS];
    for (const k of kinds)
      if (!ALL_FAULT_KINDS.includes(k)) throw new Error(`sandbox: unknown fault kind ${JSON.stringify(k)}`);
    if (kinds.length === 0 && config.rate > 0) throw new Error("sandbox: fault kinds must not be empty");
    const order = config.order ?? "random";
    if (order !== "random" && order !== "cycle")
      throw new Error(`sandbox: fault order must be "random" or "cycle", got ${JSON.stringify(order)}`);
    this.rate = config.rate;
    this.kinds = [...kinds];
    this.order = order;
    this.next = 0;
  }

  /** The fault for this request, or null for normal handling. */
  decide(): FaultKind | null {
    if (this.rate <= 0) return null;
    if (!this.rng.chance(this.rate)) return null;
    if (this.order === "random") return this.rng.pick(this.kinds);
    const kind = this.kinds[this.next % this.kinds.length]!;
    this.next++;
    return kind;
  }
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Temporarily Unavailable",
};

/** The kind of page a reverse proxy (nginx / a CDN) serves when the backend is unhappy. */
export function htmlErrorPage(status: number): string {
  const title = `${status} ${STATUS_TEXT[status] ?? "Error"}`;
  return (
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n` +
    `<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`
  );
}

/** 200 with HTML: what a captive portal or a WAF challenge looks like to an API client. */
export const WRONG_CONTENT_PAGE =
  `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Just a moment...</title></head>` +
  `<body><h1>Checking your browser before accessing the site.</h1><p>This process is automatic.</p></body></html>`;

export const TOO_MANY_REQUESTS_BODY = `{"code":"429","msg":"Too Many Requests"}`;
