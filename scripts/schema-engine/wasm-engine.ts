// Loads the WebAssembly build of Prisma's schema engine (the native binary cannot be downloaded on
// our machines) and hands out engine instances bound to a driver adapter.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as bg from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { SchemaEngine } from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { ErrorCapturingSqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";

export type { SchemaEngine };

// The project's lib settings (ES2023, no DOM) type WebAssembly as a bare namespace; this is the
// part of the runtime API we use.
type ModuleImports = Record<string, unknown>;
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, ModuleImports>) => { exports: unknown };
  RuntimeError: new (message?: string) => Error;
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

// A Rust panic reaches JS as an opaque "unreachable" RuntimeError; just before, the engine hands
// the panic's message to this global (the name is fixed by the engine's JS glue).
let lastPanicMessage = "";
const g = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(message: string): void } };
const panicRegistry = {
  set_message(message: string) {
    lastPanicMessage = message;
  },
};

// The trap happens inside a callback the engine scheduled (a microtask, a promise reaction, a
// timer), where it would be an uncaught exception killing the process. We catch it there and
// reject the engine calls in flight instead. The module's memory is unusable after a trap, and the
// glue cannot be re-instantiated (it caches views of the old memory), so later calls fail fast.
let crashed: Error | undefined;
const inflight = new Set<(error: Error) => void>();

function onTrap(error: unknown): void {
  crashed = new Error(`schema engine panicked: ${lastPanicMessage || String(error)}`, { cause: error });
  for (const reject of inflight) reject(crashed);
  inflight.clear();
}

function guard<A extends unknown[], R>(callback: (...args: A) => R): (...args: A) => R | undefined {
  return (...args: A) => {
    try {
      return callback(...args);
    } catch (error) {
      if (!(error instanceof Wasm.RuntimeError)) throw error;
      onTrap(error);
      return undefined;
    }
  };
}

// The engine schedules timers (a 10 s one after applyMigrations) and never cancels them (the glue
// has no clearTimeout); a pending timer keeps Node alive after the work is done. They stay
// referenced while an engine is open and the leftovers are unref'd once the last engine is freed,
// so a CLI run exits straight away without cutting short a timer an engine is waiting on.
const pendingTimers = new Set<NodeJS.Timeout>();
let liveEngines = 0;

function engineSetTimeout(callback: () => void, ms: number): NodeJS.Timeout {
  const run = guard(callback);
  const timer = setTimeout(() => {
    pendingTimers.delete(timer);
    run();
  }, ms >>> 0);
  if (liveEngines === 0) timer.unref();
  else pendingTimers.add(timer);
  return timer;
}

/** The glue's imports, with callbacks the engine hands to JS wrapped by `guard`. */
function engineImports(): ModuleImports {
  const imports: Record<string, unknown> = { ...bg };
  for (const [name, value] of Object.entries(bg)) {
    if (typeof value !== "function") continue;
    const original = value as (...args: unknown[]) => unknown;
    if (name.startsWith("__wbg_setTimeout_")) {
      imports[name] = engineSetTimeout;
    } else if (name.startsWith("__wbg_queueMicrotask_") || name.startsWith("__wbg_then_")) {
      // then(promise, onFulfilled, onRejected) / queueMicrotask(task); one queueMicrotask import
      // only reads the property off the global object and gets no function.
      imports[name] = (...args: unknown[]) =>
        original(
          ...args.map((arg, i) =>
            typeof arg === "function" && (i > 0 || name.startsWith("__wbg_queueMicrotask_"))
              ? guard(arg as (...a: unknown[]) => unknown)
              : arg,
          ),
        );
    }
  }
  return imports;
}

let loaded = false;

// The package's entry point imports the .wasm file as an ES module (bundler style), which Node
// cannot do; so we instantiate the module ourselves against the package's JS glue.
function load(): void {
  if (loaded) return;
  g.PRISMA_WASM_PANIC_REGISTRY ??= panicRegistry;
  const require = createRequire(import.meta.url);
  const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
  const module = new Wasm.Module(readFileSync(join(dirname(gluePath), "schema_engine_bg.wasm")));
  const instance = new Wasm.Instance(module, { "./schema_engine_bg.js": engineImports() });
  const exports = instance.exports as unknown as Parameters<typeof bg.__wbg_set_wasm>[0] & {
    __wbindgen_start(): void;
  };
  bg.__wbg_set_wasm(exports);
  exports.__wbindgen_start();
  loaded = true;
}

/** Runs an engine operation, rejecting with the panic message if the engine traps meanwhile. */
function track<T>(operation: () => Promise<T>): Promise<T> {
  if (crashed) return Promise.reject(crashed);
  return new Promise<T>((resolve, reject) => {
    inflight.add(reject);
    const settle = () => inflight.delete(reject);
    let started: Promise<T>;
    try {
      started = operation();
    } catch (error) {
      settle();
      if (error instanceof Wasm.RuntimeError) onTrap(error);
      reject(error instanceof Wasm.RuntimeError ? crashed : error);
      return;
    }
    started.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}

export interface EngineHandle {
  /** Runs `operation` on the engine; a panic becomes a rejection carrying the panic message. */
  run<T>(operation: (engine: SchemaEngine) => Promise<T>): Promise<T>;
  /** Frees the engine's memory; idempotent. */
  free(): void;
}

/**
 * A schema engine talking to the database through `adapterFactory`.
 * `datamodels` are [path, content] pairs of Prisma schema files (only diffing needs them).
 */
export async function openSchemaEngine(
  adapterFactory: ErrorCapturingSqlMigrationAwareDriverAdapterFactory,
  datamodels?: [string, string][],
  onLog?: (line: string) => void,
): Promise<EngineHandle> {
  if (crashed) throw crashed;
  load();
  liveEngines++;
  let engine: SchemaEngine;
  try {
    engine = await track(() => bg.SchemaEngine.new({ datamodels }, (line: string) => onLog?.(line), adapterFactory));
  } catch (error) {
    release();
    throw error;
  }
  let freed = false;
  return {
    run: (operation) => track(() => operation(engine)),
    free() {
      if (freed) return;
      freed = true;
      // After a trap the engine's memory is garbage; freeing could trap again.
      if (!crashed) engine.free();
      release();
    },
  };
}

function release(): void {
  liveEngines--;
  if (liveEngines > 0) return;
  for (const timer of pendingTimers) timer.unref();
  pendingTimers.clear();
}

/** Turns what the engine rejects with into an Error. */
export function engineError(error: unknown): Error {
  if (error instanceof Error) return error;
  return new Error(typeof error === "string" ? error : JSON.stringify(error));
}
