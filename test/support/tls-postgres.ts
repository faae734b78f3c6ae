// A PostgreSQL server with ssl=on, private to one test file, on a free loopback port, with a throwaway
// CA made by openssl: the server's certificate names DNS:localhost only (so 127.0.0.1 is a host name
// mismatch), and a second CA that signed nothing stands for "the wrong CA". Password authentication
// over TCP, so a test can check that the password never reaches a message.
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { freePort } from "./processes.ts";

export interface TlsPostgres {
  port: number;
  /** The password of the postgres role (scram over TCP). */
  password: string;
  /** The CA that signed the server's certificate. */
  caFile: string;
  /** A CA that signed nothing the server has. */
  wrongCaFile: string;
  /** postgresql://postgres:<password>@<host>:<port>/<db>?<query> */
  url(host: string, query: string, db?: string): string;
  destroy(): void;
}

/** The newest system PostgreSQL's bin directory (Debian: /usr/lib/postgresql/<v>/bin), if any. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length > 0 ? join(root, versions.at(-1)!, "bin") : undefined;
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${name}`].concat([
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.crt`,
    ]),
  );
}

export async function startTlsPostgres(bin: string): Promise<TlsPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "ls-tls-pg-"));
  const asRoot = userInfo().uid === 0;
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    const r = spawnSync(file, argv, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  makeCa(dir, "ca");
  makeCa(dir, "wrong-ca");
  openssl(
    dir,
    ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost"].concat([
      "-keyout",
      "server.key",
      "-out",
      "server.csr",
    ]),
  );
  writeFileSync(join(dir, "server.ext"), "subjectAltName=DNS:localhost\n");
  openssl(
    dir,
    ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"].concat([
      "-days",
      "2",
      "-extfile",
      "server.ext",
      "-out",
      "server.crt",
    ]),
  );
  const password = randomBytes(12).toString("hex");
  writeFileSync(join(dir, "pwfile"), `${password}\n`);
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    for (const f of [".", "server.key", "server.crt", "pwfile"]) chownSync(join(dir, f), uid, gid);
  }
  const data = join(dir, "data");
  run(
    "initdb",
    ["-D", data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256"].concat([
      `--pwfile=${join(dir, "pwfile")}`,
      "--no-sync",
    ]),
  );
  rmSync(join(dir, "pwfile"));
  const port = await freePort();
  const options = [
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off`,
    `-c ssl=on -c ssl_cert_file=${join(dir, "server.crt")} -c ssl_key_file=${join(dir, "server.key")}`,
  ].join(" ");
  let running = false;
  const stop = () => {
    if (!running) return;
    running = false;
    spawnSync(asRoot ? "runuser" : join(bin, "pg_ctl"), [
      ...(asRoot ? ["-u", "postgres", "--", join(bin, "pg_ctl")] : []),
      ...["-D", data, "-m", "immediate", "-w", "stop"],
    ]);
  };
  const onExit = () => {
    stop();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  run("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", options, "start"]);
  running = true;
  return {
    port,
    password,
    caFile: join(dir, "ca.crt"),
    wrongCaFile: join(dir, "wrong-ca.crt"),
    url: (host, query, db = "postgres") =>
      `postgresql://postgres:${password}@${host}:${port}/${db}${query ? `?${query}` : ""}`,
    destroy: () => {
      process.removeListener("exit", onExit);
      onExit();
    },
  };
}
