// A write of one module that another module's statement can carry, so that the two go to the
// database in one round trip while each module keeps its own SQL: the owner gives the write's text
// as a function of its parameters' names and its values; the carrier numbers them after its own and
// puts the write in a WITH item. Both then commit or fail together (one statement is one
// transaction), and nothing lives on the connection between statements. See
// docs/design/write-path.md, "Round trips of a quiet job".
export interface SqlPart {
  /**
   * One data-modifying statement (UPDATE, INSERT or DELETE, RETURNING optional), valid alone and as
   * a WITH item; `param(i)` names its i-th value (from 1).
   */
  sql(param: (i: number) => string): string;
  values: unknown[];
}

/** The part as a statement of its own. */
export function alone(part: SqlPart): { text: string; values: unknown[] } {
  return { text: part.sql((i) => `$${i}`), values: part.values };
}

/** The part as the WITH item `name` of a statement that has `taken` parameters of its own before it. */
export function carried(part: SqlPart, name: string, taken: number): { item: string; values: unknown[] } {
  return { item: `${name} AS (${part.sql((i) => `$${taken + i}`)})`, values: part.values };
}
