// Public surface of the sandbox exchange (see README.md).
export { startSandbox } from "./server.ts";
export { DEFAULT_SANDBOX_CREDENTIALS, ALL_FAULT_KINDS, BUSINESS_TYPES } from "./types.ts";
export type {
  FaultKind,
  Ordering,
  Sandbox,
  SandboxBill,
  SandboxCredentials,
  SandboxOptions,
  SandboxStats,
} from "./types.ts";
