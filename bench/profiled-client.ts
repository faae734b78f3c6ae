// The real ExchangeClient with timing around it, for the ingest profile. Nothing in src changes:
// the subclass times each call() as a whole (budget gate + HTTP + body + JSON parse + validation),
// and wraps the call's own `parse` step (envelope check, item validation, mapping to Bill), which
// the client runs after its lossless JSON parse. The JSON parse itself happens inside the client
// where nothing can be wrapped, so it is estimated afterwards by parsing a sample of the very same
// response texts again (cost per character x characters received).
import type { Logger } from "pino";
import { parseLossless } from "../src/exchange/lossless-json.ts";
import { ExchangeClient, type ApiCall } from "../src/exchange/http-client.ts";
import { SlidingWindowGate } from "../src/exchange/weight-gate.ts";
import { DEFAULT_SANDBOX_CREDENTIALS } from "../src/sandbox/index.ts";

const SAMPLE_CHARS = 8_000_000;

export interface CallProfile {
  calls: number;
  /** Whole call() time: gate wait, request, response body, JSON parse, validation and mapping. */
  callSeconds: number;
  /** The call's parse step: envelope, per-item validation, mapping to Bill (toStorable, ...). */
  validateMapSeconds: number;
  /** Characters of response text received. */
  responseChars: number;
  /** Lossless JSON parse, estimated from a re-parse of sampled responses. */
  jsonParseSeconds: number;
  /** The same sample with the native JSON.parse (not lossless: ids above 2^53 would change), for scale. */
  nativeJsonParseSeconds: number;
}

/** A profiled client of the bench's sandbox, with the budget gate out of the way (1e9). */
export function sandboxBenchClient(baseUrl: string, logger: Logger): ProfiledClient {
  return new ProfiledClient({
    baseUrl,
    credentials: DEFAULT_SANDBOX_CREDENTIALS,
    locale: "en-US",
    timeoutMs: 30_000,
    maxAttempts: 3,
    gate: new SlidingWindowGate({ ip: 1e9, uid: 1e9, windowMs: 1000 }),
    logger,
  });
}

export class ProfiledClient extends ExchangeClient {
  private calls = 0;
  private callSeconds = 0;
  private validateMapSeconds = 0;
  private responseChars = 0;
  private readonly samples: string[] = [];
  private sampleChars = 0;

  override async call<T>(c: ApiCall<T>): Promise<T> {
    const started = performance.now();
    try {
      return await super.call({
        ...c,
        parse: (json, text, info) => {
          this.responseChars += text.length;
          // Every 4th response, up to a bounded amount, is kept to time the JSON parse later.
          if (this.calls % 4 === 0 && this.sampleChars < SAMPLE_CHARS) {
            this.samples.push(text);
            this.sampleChars += text.length;
          }
          const t = performance.now();
          try {
            return c.parse(json, text, info);
          } finally {
            this.validateMapSeconds += (performance.now() - t) / 1000;
          }
        },
      });
    } finally {
      this.calls++;
      this.callSeconds += (performance.now() - started) / 1000;
    }
  }

  /** The profile; re-parses the samples (call after the measured run, not during it). */
  profile(): CallProfile {
    const perChar = (parse: (text: string) => unknown) => {
      if (this.sampleChars === 0) return 0;
      const t = performance.now();
      for (const s of this.samples) parse(s);
      return (performance.now() - t) / 1000 / this.sampleChars;
    };
    perChar(parseLossless); // warm-up: the first pass pays for compilation
    const lossless = perChar(parseLossless);
    const native = perChar(JSON.parse);
    return {
      calls: this.calls,
      callSeconds: this.callSeconds,
      validateMapSeconds: this.validateMapSeconds,
      responseChars: this.responseChars,
      jsonParseSeconds: lossless * this.responseChars,
      nativeJsonParseSeconds: native * this.responseChars,
    };
  }
}
