// What the GoBD export's tests need besides the database: a reader of the export's CSV dialect,
// independent of the writer it checks, and xmllint (Debian's libxml2-utils), installed on the fly
// when root may (as test/support/apt-install.ts does for the other tools), else the validation
// tests are skipped, except in CI, where .ci/run installs it and a missing xmllint fails.
import { spawnSync } from "node:child_process";
import { aptInstall } from "../../support/apt-install.ts";

/**
 * Records of `;`-separated fields ended by CR LF; a field in double quotes (quotes doubled inside)
 * is text, an empty field without quotes is null (SQL NULL), any other field is taken as written.
 */
export function parseGobdCsv(text: string): (string | null)[][] {
  const records: (string | null)[][] = [];
  let fields: (string | null)[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      let value = "";
      for (i++; ; i++) {
        if (i >= text.length) throw new Error("a quoted field is not closed");
        if (text[i] !== '"') value += text[i];
        else if (text[i + 1] === '"') [value, i] = [`${value}"`, i + 1];
        else break;
      }
      fields.push(value);
      i++;
    } else {
      let end = i;
      while (end < text.length && !';\r\n"'.includes(text[end]!)) end++;
      fields.push(end === i ? null : text.slice(i, end));
      i = end;
    }
    if (text[i] === ";") i++;
    else if (text.startsWith("\r\n", i)) {
      records.push(fields);
      fields = [];
      i += 2;
    } else throw new Error(`unexpected ${JSON.stringify(text.slice(i, i + 10))} at ${i}`);
  }
  if (fields.length > 0) throw new Error("the text does not end with CR LF");
  return records;
}

const hasXmllint = () => spawnSync("xmllint", ["--version"], { stdio: "ignore" }).status === 0;

/** Why xmllint cannot be had here (the validation tests are then skipped), or undefined. */
export function noXmllint(): string | undefined {
  if (hasXmllint()) return undefined;
  if (process.getuid?.() === 0 && !process.env.CI) {
    aptInstall("libxml2-utils", (line) => process.stderr.write(`${line}\n`), "xmllint not found on this machine");
    if (hasXmllint()) return undefined;
  }
  return process.env.CI ? undefined : "xmllint is not installed (Debian's libxml2-utils), and only root can install it";
}

export function xmllint(args: string[], cwd?: string): { code: number; stderr: string } {
  const r = spawnSync("xmllint", args, { encoding: "utf8", ...(cwd ? { cwd } : {}) });
  return { code: r.status ?? 1, stderr: r.stderr };
}
