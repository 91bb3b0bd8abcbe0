// The real server for the tests: `carcassonne serve` on a free port of
// loopback with a temporary data directory, stopped by SIGTERM.

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** CARCASSONNE_BIN, or the release build of the repository (from dist/test/support/). */
export const BIN = process.env["CARCASSONNE_BIN"]
  ? resolve(process.env["CARCASSONNE_BIN"])
  : resolve(here, "../../../../../target/release/carcassonne");
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class Server {
  private constructor(
    private readonly child: ChildProcess,
    readonly exited: Promise<Exit>,
    readonly dataDir: string,
    readonly port: number,
    /** The last lines the server logged, for failure messages. */
    readonly log: string[],
    /** The server's admin key (CARCASSONNE_ADMIN_KEY), which makes organisers. */
    readonly adminKey: string | undefined,
  ) {}

  /** "127.0.0.1:PORT", as the Node client takes it. */
  get addr(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** "http://127.0.0.1:PORT", as a page's grpc-web transport takes it. */
  get url(): string {
    return `http://${this.addr}`;
  }

  /** Starts a server on `port` (0: any free port) with `dataDir` (a new
   * temporary one by default); resolves once it prints
   * "listening on 127.0.0.1:PORT" on its first stdout line. With
   * `adminKey`, the server's admin key. */
  static async start(options: { port?: number; dataDir?: string; adminKey?: string } = {}): Promise<Server> {
    const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "carcassonne-ts-test-"));
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", RUST_LOG: "warn" };
    delete env["CARCASSONNE_ADMIN_KEY"];
    if (options.adminKey !== undefined) env["CARCASSONNE_ADMIN_KEY"] = options.adminKey;
    const child = spawn(
      BIN,
      ["serve", "--addr", `127.0.0.1:${options.port ?? 0}`, "--data", dataDir, "--wal-mib", "1"],
      { stdio: ["ignore", "pipe", "pipe"], env },
    );
    const log: string[] = [];
    const remember = (line: string) => {
      log.push(line);
      if (log.length > 40) log.shift();
    };
    createInterface({ input: child.stderr! }).on("line", remember);
    const exited = new Promise<Exit>((res) => child.on("exit", (code, signal) => res({ code, signal })));
    const failed = new Promise<never>((_, rej) =>
      child.on("error", (e) => rej(new Error(`cannot start the server ${BIN}: ${e.message}`))),
    );
    const first = new Promise<string>((res) => {
      let seen = false;
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (!seen) res(line);
        else remember(line);
        seen = true;
      });
    });
    let timer: NodeJS.Timeout | undefined;
    const line = await Promise.race([
      first,
      failed,
      exited.then(({ code, signal }) => {
        throw new Error(
          `the server exited (code ${code}, signal ${signal}) before listening:\n${log.join("\n")}`,
        );
      }),
      new Promise<never>((_, rej) => {
        timer = setTimeout(
          () => rej(new Error(`the server printed nothing in ${START_TIMEOUT_MS} ms`)),
          START_TIMEOUT_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const m = /^listening on 127\.0\.0\.1:(\d+)$/.exec(line);
    if (!m) {
      child.kill("SIGKILL");
      throw new Error(`unexpected first stdout line of the server: ${JSON.stringify(line)}`);
    }
    return new Server(child, exited, dataDir, Number(m[1]), log, options.adminKey);
  }

  /** SIGTERM, and the exit; throws when the server ignores it. */
  async stop(): Promise<Exit> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      this.exited,
      new Promise<null>((res) => {
        timer = setTimeout(() => res(null), STOP_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    if (result === null) {
      this.child.kill("SIGKILL");
      throw new Error(`the server ignored SIGTERM for ${STOP_TIMEOUT_MS} ms`);
    }
    return result;
  }

  /** SIGKILL, as a crash: nothing is finished or closed. */
  async kill(): Promise<Exit> {
    this.child.kill("SIGKILL");
    return this.exited;
  }

  /** The same data directory and port again, after stop() or kill(). */
  restart(): Promise<Server> {
    return Server.start({
      port: this.port,
      dataDir: this.dataDir,
      ...(this.adminKey === undefined ? {} : { adminKey: this.adminKey }),
    });
  }

  /** Stops the server (SIGKILL if need be) and removes its data. */
  async dispose(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGKILL");
      await this.exited;
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
