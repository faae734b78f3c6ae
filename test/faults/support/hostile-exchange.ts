// A loopback HTTP server that answers the exchange's endpoints with whatever bytes a test hands it:
// hostile bodies, exactly as generated (invalid UTF-8 included). The sandbox exchange encodes
// only well-formed responses, so the fault tests bring their own.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface BillsRequest {
  startTime: number;
  endTime: number;
  limit: number;
  businessType?: string;
  coin?: string;
  symbol?: string;
}

export type Answer = Uint8Array | { status: number; contentType?: string; body: Uint8Array | string };

export interface HostileExchange {
  url: string;
  /** Answers every bills request from now on. */
  answer(fn: (q: BillsRequest, path: string) => Answer): void;
  /** Requests received since the last answer() call. */
  requests(): number;
  close(): Promise<void>;
}

export async function startHostileExchange(): Promise<HostileExchange> {
  let handler: (q: BillsRequest, path: string) => Answer = () => ({ status: 500, body: "no answer set" });
  let count = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      count++;
      let a: Answer;
      try {
        a = handler(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as BillsRequest, req.url ?? "");
      } catch (err) {
        a = { status: 500, body: `test exchange failed: ${(err as Error).message}` };
      }
      const { status, contentType, body } =
        a instanceof Uint8Array ? { status: 200, contentType: "application/json", body: a } : a;
      res.writeHead(status, { "content-type": contentType ?? "application/json" });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answer(fn) {
      handler = fn;
      count = 0;
    },
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
