// deploy/kubernetes cannot be applied here (no cluster), so check what can be checked: every
// document parses, has a kind we ship and no namespace; every variable set for ledger-sync is one
// the configuration accepts, with values it accepts; the probes, the grace period, the master key
// file and the metrics Service agree with the worker's configuration; and no secret is inline.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config/env-schema.ts";

const DIR = "deploy/kubernetes";

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
    configMapKeyRef?: unknown;
  };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  failureThreshold?: number;
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  env?: EnvVar[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
}
interface Volume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  configMap?: { name: string };
}
interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    containers: Container[];
    volumes?: Volume[];
    restartPolicy?: string;
    terminationGracePeriodSeconds?: number;
  };
}
interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: {
    replicas?: number;
    selector?: Record<string, unknown> & { matchLabels?: Record<string, string> };
    template?: PodTemplate;
    clusterIP?: string;
    ports?: { name?: string; port: number; targetPort?: string | number }[];
  };
  stringData?: Record<string, string>;
  data?: Record<string, string>;
}

const files = readdirSync(DIR)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();
const parsed = files.map((file) => {
  const docs = parseAllDocuments(readFileSync(join(DIR, file), "utf8"));
  return { file, docs: Array.isArray(docs) ? docs : [docs] };
});
const manifests: Manifest[] = parsed.flatMap(({ file, docs }) =>
  docs.map((d) => ({ ...(d.toJS() as Omit<Manifest, "file">), file })),
);
const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const workloads = manifests.filter((m) => m.spec?.template !== undefined);
const containersOf = (m: Manifest) => m.spec!.template!.spec.containers;
const secrets = new Map(ofKind("Secret").map((s) => [s.metadata.name, { ...s.data, ...s.stringData }]));
const known = new Set(Object.keys(envSchema.shape));

const deployment = ofKind("Deployment")[0]!;
const worker = containersOf(deployment)[0]!;

/** The variables a container gets, each with the value the configuration would see where one is known. */
function concreteEnv(container: Container): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of container.env ?? []) {
    if (v.value !== undefined) out[v.name] = String(v.value);
    const ref = v.valueFrom?.secretKeyRef;
    // A placeholder of the template stands for the real value: a URL of the right form.
    if (ref && known.has(v.name)) out[v.name] = secrets.get(ref.name)![ref.key]!;
  }
  return out;
}

/** The variables `--from-env PREFIX` reads, when the container's arguments have it. */
function fromEnvNames(container: Container): string[] {
  const args = container.args ?? [];
  const i = args.indexOf("--from-env");
  if (i < 0) return [];
  return ["API_KEY", "API_SECRET", "API_PASSPHRASE"].map((s) => `${args[i + 1]}_${s}`);
}

// The worker's configuration, or the defaults when it is invalid (the test of the values says why).
const workerParsed = envSchema.safeParse(concreteEnv(worker));
const workerEnv = workerParsed.success ? workerParsed.data : envSchema.parse({});

/** Bytes of a Kubernetes memory quantity such as 512Mi or 1G. */
function bytes(quantity: string): number {
  const m = /^([0-9]+)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity);
  expect(m, quantity).not.toBeNull();
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 }[m![2] ?? ""] ?? 1;
  return Number(m![1]) * unit;
}

/** The port number a probe or Service names, by number or by the container's port name. */
function portNumber(container: Container, port: string | number): number | undefined {
  if (typeof port === "number") return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

describe("deploy/kubernetes", () => {
  it("parses: every document of every file, with the kinds we ship and no namespace", () => {
    expect(files).toEqual([
      "accounts-add-job.yaml",
      "accounts-import-job.yaml",
      "metrics-service.yaml",
      "migrate-job.yaml",
      "secret.example.yaml",
      "worker-deployment.yaml",
    ]);
    for (const { file, docs } of parsed) {
      for (const d of docs) {
        expect(
          d.errors.map((e) => e.message),
          file,
        ).toEqual([]);
        expect(
          d.warnings.map((e) => e.message),
          file,
        ).toEqual([]);
      }
    }
    const apiVersions: Record<string, string> = { Secret: "v1", Service: "v1", Job: "batch/v1", Deployment: "apps/v1" };
    for (const m of manifests) {
      expect(apiVersions[m.kind], `${m.file}: kind ${m.kind}`).toBeDefined();
      expect(m.apiVersion, `${m.file}: ${m.kind}`).toBe(apiVersions[m.kind]);
      expect(m.metadata.name, m.file).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      // Namespace-agnostic: `kubectl -n` decides.
      expect(m.metadata.namespace, `${m.file}: ${m.metadata.name}`).toBeUndefined();
      expect(m.metadata.labels?.["app.kubernetes.io/name"], `${m.file}: ${m.metadata.name}`).toBe("ledger-sync");
    }
    const names = (kind: string) => ofKind(kind).map((m) => m.metadata.name);
    expect(names("Deployment")).toEqual(["ledger-sync-worker"]);
    expect(names("Service")).toEqual(["ledger-sync"]);
    expect(names("Job").sort()).toEqual([
      "ledger-sync-accounts-add",
      "ledger-sync-accounts-import",
      "ledger-sync-migrate",
    ]);
    expect(ofKind("Secret").every((s) => s.file === "secret.example.yaml")).toBe(true);
  });

  it("runs the right command in each workload, all from one image", () => {
    const commands = Object.fromEntries(workloads.map((w) => [w.metadata.name, containersOf(w)[0]!.args?.[0]]));
    expect(commands).toEqual({
      "ledger-sync-worker": "worker",
      "ledger-sync-migrate": "migrate",
      "ledger-sync-accounts-add": "accounts",
      "ledger-sync-accounts-import": "accounts",
    });
    for (const w of workloads) {
      expect(containersOf(w), w.metadata.name).toHaveLength(1);
      // The image's entry point is ledger-sync itself: args only.
      expect(containersOf(w)[0]!.command, w.metadata.name).toBeUndefined();
      if (w.kind === "Job") expect(w.spec!.template!.spec.restartPolicy, w.metadata.name).toBe("Never");
    }
    expect(new Set(workloads.map((w) => containersOf(w)[0]!.image)).size, "one image, one tag").toBe(1);
  });

  it("sets only variables the configuration accepts, and the values given validate", () => {
    for (const w of workloads) {
      for (const c of containersOf(w)) {
        const extra = fromEnvNames(c);
        for (const v of c.env ?? []) {
          const where = `${w.metadata.name}/${c.name}: ${v.name}`;
          expect(known.has(v.name) || extra.includes(v.name), where).toBe(true);
          expect((v.value === undefined) !== (v.valueFrom === undefined), `${where}: value or valueFrom`).toBe(true);
          const ref = v.valueFrom?.secretKeyRef;
          if (ref) expect(Object.keys(secrets.get(ref.name) ?? {}), `${where}: ${ref.name}`).toContain(ref.key);
        }
        // envFrom only brings the credentials an ACCOUNTS_FILE names, from a Secret of the template.
        for (const from of c.envFrom ?? []) {
          expect(c.args?.slice(0, 2), `${w.metadata.name}: envFrom`).toEqual(["accounts", "import"]);
          expect(secrets.has(from.secretRef?.name ?? ""), `${w.metadata.name}: envFrom`).toBe(true);
        }
        const env = concreteEnv(c);
        const result = envSchema.safeParse(env);
        expect(result.success, `${w.metadata.name}: ${JSON.stringify(result.error?.issues)}`).toBe(true);
      }
    }
  });

  it("keeps every secret out of the workloads: references to Secrets, the master key as a file", () => {
    const sensitive =
      /^(DATABASE_URL|REDIS_URL|LEDGER_SYNC(_NEW)?_MASTER_KEY|CONSOLE_TOKEN|.*_API_(KEY|SECRET|PASSPHRASE))$/;
    for (const w of workloads) {
      const text = JSON.stringify(w);
      // A URL with a password, or 32 bytes of hex, anywhere in the workload.
      expect(text, w.metadata.name).not.toMatch(/[a-z]+:\/\/[^/"@\s]*:[^/"@\s]+@/);
      expect(text, w.metadata.name).not.toMatch(/[0-9a-fA-F]{64}/);
      for (const c of containersOf(w)) {
        for (const v of c.env ?? []) {
          if (sensitive.test(v.name)) {
            expect(v.value, `${w.metadata.name}: ${v.name} inline`).toBeUndefined();
            expect(v.valueFrom?.secretKeyRef, `${w.metadata.name}: ${v.name}`).toBeDefined();
          }
        }
        // The master key is never an environment variable: a file from the Secret.
        const names = (c.env ?? []).map((v) => v.name);
        expect(names, w.metadata.name).not.toContain("LEDGER_SYNC_MASTER_KEY");
        const file = c.env?.find((v) => v.name === "LEDGER_SYNC_MASTER_KEY_FILE")?.value;
        if (w.metadata.name === "ledger-sync-migrate") {
          expect(file, "migrate needs no key").toBeUndefined();
          continue;
        }
        expect(file, w.metadata.name).toBeDefined();
        const mount = c.volumeMounts!.find((m) => file!.startsWith(`${m.mountPath}/`))!;
        expect(mount, `${w.metadata.name}: ${file} is under no mount`).toBeDefined();
        expect(mount.readOnly).toBe(true);
        const volume = w.spec!.template!.spec.volumes!.find((v) => v.name === mount.name)!;
        const item = volume.secret!.items!.find((i) => file === `${mount.mountPath}/${i.path}`)!;
        expect(item, `${w.metadata.name}: ${file}`).toBeDefined();
        expect(secrets.get(volume.secret!.secretName)![item.key], `${w.metadata.name}: ${item.key}`).toBeDefined();
      }
    }
    // The template holds placeholders only, each marked.
    for (const [name, values] of secrets)
      for (const [key, value] of Object.entries(values)) expect(value, `${name}.${key}`).toContain("CHANGE-ME");
  });

  it("runs 3 workers with resources, readiness on /healthz and liveness on /livez at METRICS_PORT, and time to shut down", () => {
    expect(deployment.spec!.replicas).toBe(3);
    const metrics = worker.ports!.find((p) => p.containerPort === workerEnv.METRICS_PORT);
    expect(metrics, `a container port at METRICS_PORT ${workerEnv.METRICS_PORT}`).toBeDefined();
    for (const [kind, path] of [
      ["readinessProbe", "/healthz"],
      ["livenessProbe", "/livez"],
    ] as const) {
      const probe = worker[kind];
      expect(probe?.httpGet?.path, kind).toBe(path);
      expect(portNumber(worker, probe!.httpGet!.port), kind).toBe(workerEnv.METRICS_PORT);
    }
    // The grace period covers SHUTDOWN_TIMEOUT_MS, plus closing Redis, HTTP and PostgreSQL.
    const grace = deployment.spec!.template!.spec.terminationGracePeriodSeconds!;
    expect(grace * 1000).toBeGreaterThanOrEqual(workerEnv.SHUTDOWN_TIMEOUT_MS + 10_000);
    // Memory from the figures (a backfill stays near 130 MB): requests and limits, 256 MiB to 1 GiB.
    const { requests, limits } = worker.resources!;
    for (const q of [requests!.memory!, limits!.memory!]) {
      expect(bytes(q)).toBeGreaterThanOrEqual(256 * 2 ** 20);
      expect(bytes(q)).toBeLessThanOrEqual(2 ** 30);
    }
    expect(bytes(requests!.memory!)).toBeLessThanOrEqual(bytes(limits!.memory!));
    expect(requests!.cpu).toBeDefined();
    // The template's labels are what the Deployment selects.
    expect(deployment.spec!.template!.metadata!.labels).toMatchObject(deployment.spec!.selector!.matchLabels!);
  });

  it("names the egress: the NAT gateway's one IP by default, the node's name for nodes with their own", () => {
    const egress = worker.env!.find((v) => v.name === "EGRESS_ID")!;
    expect(egress.value).toBe("cluster-nat");
    expect(workerEnv.EGRESS_ID).toBe("cluster-nat");
    // The alternative is written out in the Deployment, ready to swap in.
    const text = readFileSync(join(DIR, "worker-deployment.yaml"), "utf8");
    expect(text).toMatch(
      /#\s+- name: EGRESS_ID\n\s*#\s+valueFrom:\n\s*#\s+fieldRef:\n\s*#\s+fieldPath: spec\.nodeName/,
    );
  });

  it("serves every worker's /metrics through a headless Service, scraped even when unhealthy", () => {
    const service = ofKind("Service")[0]!;
    expect(service.spec!.clusterIP).toBe("None");
    expect((service.spec as { publishNotReadyAddresses?: boolean }).publishNotReadyAddresses).toBe(true);
    expect(deployment.spec!.template!.metadata!.labels).toMatchObject(service.spec!.selector!);
    const port = service.spec!.ports!.find((p) => p.name === "metrics")!;
    expect(port.port).toBe(workerEnv.METRICS_PORT);
    expect(portNumber(worker, port.targetPort!)).toBe(workerEnv.METRICS_PORT);
    const annotations = deployment.spec!.template!.metadata!.annotations!;
    expect(annotations["prometheus.io/scrape"]).toBe("true");
    expect(annotations["prometheus.io/port"]).toBe(String(workerEnv.METRICS_PORT));
    expect(annotations["prometheus.io/path"]).toBe("/metrics");
  });

  it("has a README naming every manifest and the apply order", () => {
    const readme = readFileSync(join(DIR, "README.md"), "utf8");
    for (const file of files) expect(readme, file).toContain(`\`${file}\``);
    const order = ["kubectl create secret generic ledger-sync", "-f migrate-job.yaml", "-f worker-deployment.yaml"];
    const at = order.map((s) => readme.indexOf(s));
    expect(
      at.every((i) => i >= 0),
      JSON.stringify(at),
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});
