// Every statement a piece of work sends through any pg client of this process, white space folded:
// how tests count round trips and check what rides in one statement (issue 32, "round trips").
import pg from "pg";

export async function statementsOf<T>(body: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const c = args[0] as string | { text?: string };
    sent.push((typeof c === "string" ? c : (c?.text ?? "")).replace(/\s+/g, " ").trim());
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    return { result: await body(), sent };
  } finally {
    pg.Client.prototype.query = query;
  }
}
