// docs/configuration.md: every environment variable of the schema, from src/config/env-docs.ts.
import { CONFIGURATION_INTRO, ENV_DOCS, READER_COMMANDS, type EnvDoc } from "../../src/config/env-docs.ts";
import { envSchema } from "../../src/config/env-schema.ts";
import { GENERATED_NOTE } from "./generated-note.ts";

export function configurationPage(): string {
  // The type check already holds this; a cast must not make a row go missing unnoticed.
  const accepted = Object.keys(envSchema.shape);
  const missing = accepted.filter((name) => !(name in ENV_DOCS));
  const extra = Object.keys(ENV_DOCS).filter((name) => !accepted.includes(name));
  if (missing.length + extra.length > 0)
    throw new Error(
      `src/config/env-docs.ts does not match the schema: missing ${missing.join(", ") || "none"}, ` +
        `not in the schema ${extra.join(", ") || "none"}`,
    );
  const rows = Object.entries(ENV_DOCS).map(
    ([name, doc]) => `| \`${name}\` | ${cell(name, doc.default)} | ${cell(name, doc.meaning)} | ${readers(doc)} |`,
  );
  return [
    GENERATED_NOTE("src/config/env-docs.ts"),
    "# Configuration",
    "",
    CONFIGURATION_INTRO,
    "",
    "| Variable | Default | Meaning | Read by |",
    "|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

function readers(doc: EnvDoc): string {
  if (doc.readBy === "every command") return "every command";
  const order = (c: string) => (READER_COMMANDS as readonly string[]).indexOf(c);
  return [...new Set(doc.readBy)]
    .sort((a, b) => order(a) - order(b))
    .map((c) => `\`${c}\``)
    .join(", ");
}

/** A table cell: one line, its pipes escaped. */
function cell(name: string, text: string): string {
  if (text.trim() === "") throw new Error(`src/config/env-docs.ts: ${name} has an empty cell`);
  if (/[\r\n]/.test(text)) throw new Error(`src/config/env-docs.ts: ${name} has a line break in a table cell`);
  return text.replace(/(?<!\\)\|/g, "\\|");
}

