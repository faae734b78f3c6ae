// docs/cli.md: every command's and subcommand's `--help`, as commander prints it, from the program
// main.ts runs (built, never run). The width is fixed and colours are off, so the page is the same
// on every terminal and machine.
import type { Command } from "commander";
import { buildProgram } from "../../src/cli/program.ts";
import { GENERATED_NOTE } from "./generated-note.ts";

/** Commander's width when stdout is not a terminal: what `ledger-sync <command> --help | less` shows. */
export const HELP_WIDTH = 80;

export interface HelpSection {
  /** `ledger-sync accounts add`. */
  path: string;
  help: string;
}

/** The program and every command under it, depth first in the order `--help` lists them. */
export function helpSections(program: Command = buildProgram()): HelpSection[] {
  const sections: HelpSection[] = [];
  const visit = (command: Command, path: string) => {
    sections.push({ path, help: helpText(command) });
    for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`);
  };
  visit(program, program.name());
  return sections;
}

function helpText(command: Command): string {
  let text = "";
  command.configureOutput({
    writeOut: (s) => {
      text += s;
    },
    getOutHelpWidth: () => HELP_WIDTH,
    getOutHasColors: () => false,
  });
  command.outputHelp();
  if (text.includes("```")) throw new Error(`${command.name()}: help text must not contain a code fence`);
  return text.trimEnd();
}

export function cliPage(sections: HelpSection[] = helpSections()): string {
  const anchor = (path: string) => path.replace(/ /g, "-");
  return [
    GENERATED_NOTE("the commands' own help (src/cli/commands)"),
    "# Commands",
    "",
    `Every command's help, as \`<command> --help\` prints it (${HELP_WIDTH} columns). The environment`,
    "variables each command reads: [configuration.md](configuration.md).",
    "",
    ...sections.map((s) => `- [\`${s.path}\`](#${anchor(s.path)})`),
    ...sections.flatMap((s) => ["", `## ${s.path}`, "", "```text", s.help, "```"]),
    "",
  ].join("\n");
}
