// A redis-server of a test's own, configured as a rented one may be (an eviction policy, a small
// maxmemory, CONFIG renamed away, TLS only), on a free loopback port in a temporary directory,
// and a throwaway CA made with openssl for the TLS ones.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForPort } from "../../src/local-services/free-port.ts";
import { spawnOwned, stopChild } from "../../src/local-services/owned-process.ts";

export interface ConfiguredRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Whether this machine has a redis-server, and one built with TLS (Debian's is). */
export function redisServerFeatures(): { present: boolean; tls: boolean } {
  const v = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (v.status !== 0) return { present: false, tls: false };
  const ldd = spawnSync("sh", ["-c", 'ldd "$(command -v redis-server)"'], { encoding: "utf8" });
  return { present: true, tls: /libssl/.test(ldd.stdout ?? "") && spawnSync("openssl", ["version"]).status === 0 };
}

/**
 * redis-server with `args` added to a loopback, persistence-free base. With `tls`, it listens
 * for TLS only (--port 0), with that certificate and key; the URL is then rediss://.
 */
export async function startConfiguredRedis(
  args: string[],
  tls?: { certFile: string; keyFile: string; caFile: string; host?: string },
): Promise<ConfiguredRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "ls-redis-rented-"));
  const listen = tls
    ? [
        "--port",
        "0",
        "--tls-port",
        String(port),
        "--tls-cert-file",
        tls.certFile,
        "--tls-key-file",
        tls.keyFile,
        "--tls-ca-cert-file",
        tls.caFile,
        "--tls-auth-clients",
        "no",
      ]
    : ["--port", String(port)];
  const base = ["--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
  const { child, disown } = spawnOwned("redis-server", [...listen, ...base, ...args], {
    stdio: "ignore",
    deathSignal: "SIGTERM",
  });
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code, signal) => reject(new Error(`redis-server exited (${code ?? signal})`))),
  );
  try {
    await Promise.race([waitForPort(port), exited]);
  } catch (err) {
    disown();
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  exited.catch(() => undefined);
  return {
    url: `${tls ? "rediss" : "redis"}://${tls?.host ?? "127.0.0.1"}:${port}`,
    port,
    stop: async () => {
      await stopChild(child, "SIGTERM", 10_000);
      disown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ThrowawayCa {
  dir: string;
  caFile: string;
  /** A server certificate for 127.0.0.1 (IP SAN) signed by the CA, and its key. */
  certFile: string;
  keyFile: string;
  remove(): void;
}

/** A CA and a server certificate for 127.0.0.1 (IP SAN), made by openssl in a temporary directory. */
export function makeThrowawayCa(name = "ca"): ThrowawayCa {
  const dir = mkdtempSync(join(tmpdir(), `ls-redis-${name}-`));
  const p = (f: string) => join(dir, f);
  const openssl = (...a: string[]) => execFileSync("openssl", a, { stdio: "ignore" });
  const days = ["-days", "2"];
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    ...days,
    "-subj",
    `/CN=ledger-sync test ${name}`,
    "-keyout",
    p("ca.key"),
    "-out",
    p("ca.pem"),
  );
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    p("server.key"),
    "-out",
    p("server.csr"),
  );
  writeFileSync(p("ext.cnf"), "subjectAltName=IP:127.0.0.1\n");
  openssl(
    "x509",
    "-req",
    "-in",
    p("server.csr"),
    "-CA",
    p("ca.pem"),
    "-CAkey",
    p("ca.key"),
    "-CAcreateserial",
    ...days,
    "-extfile",
    p("ext.cnf"),
    "-out",
    p("server.pem"),
  );
  return {
    dir,
    caFile: p("ca.pem"),
    certFile: p("server.pem"),
    keyFile: p("server.key"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
