// The Prometheus text format as the ops tests read it: one sample per series, with its labels.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (!m) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

export function find(samples: Sample[], name: string, labels: Record<string, string>): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

export function value(samples: Sample[], name: string, labels: Record<string, string>): number {
  const found = find(samples, name, labels);
  if (found.length !== 1)
    throw new Error(`expected one sample of ${name} ${JSON.stringify(labels)}, found ${found.length}`);
  return found[0]!.value;
}

/** The account a series belongs to: its account label, or the scope of a uid weight budget. */
export function accountOf(s: Sample): string | undefined {
  return s.labels.account ?? (s.labels.budget === "uid" ? s.labels.scope : undefined);
}
