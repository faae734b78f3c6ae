// A Db that answers some reads from rows another statement already read: a statement that reads ahead
// what the next steps will ask (in the same round trip) hands those rows to steps that take a Db and
// know nothing of it. Rules, and why:
// - An answer is keyed on the read's exact text and parameters, as its owner's function sends them:
//   a step that asks anything else (another range, a text changed since) goes to the database, so a
//   mismatch costs a round trip, never a wrong answer.
// - The answers stand only while nothing else went to the database through this Db: the first other
//   use (a read not answered, a write, a transaction) drops them all, so an answer is never older
//   than anything its caller did after reading it.
// - Each answer serves one read; the next read of the same text goes to the database.
// - An answer is an awaited result, not a PrismaPromise: it cannot join a $transaction([...]).
// See docs/design/write-path.md, "Round trips of a quiet job".
import type { Db } from "./prisma.ts";

/** The rows a read (its text and parameters, as its owner sends them) would return. */
export interface ReadAnswer {
  text: string;
  values: unknown[];
  rows: unknown[];
}

const keyOf = (text: string, values: unknown[]) =>
  JSON.stringify([text, values], (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));

/** `db`, with `answers` given to the reads that ask for them until anything else goes through it. */
export function answering(db: Db, answers: readonly ReadAnswer[]): Db {
  const left = new Map(answers.map((a) => [keyOf(a.text, a.values), a.rows]));
  if (left.size === 0) return db;
  const query = (text: string, ...values: unknown[]) => {
    const key = keyOf(text, values);
    const rows = left.get(key);
    if (rows === undefined) {
      left.clear();
      return db.$queryRawUnsafe(text, ...values);
    }
    left.delete(key);
    return Promise.resolve(rows);
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "$queryRawUnsafe") return query;
      left.clear();
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
