// Public surface of the sandbox exchange (see README.md).
export { startSandbox } from "./server.ts";
export { DEFAULT_SANDBOX_CREDENTIALS, ALL_FAULT_KINDS, BUSINESS_TYPES, UNKNOWN_BUSINESS_TYPES } from "./types.ts";
export { sandboxExchangeEnv } from "./client-env.ts";
export { fleetCredentials, fleetUid } from "./fleet.ts";
export type {
  AccountEndpointMode,
  AccountEvolution,
  FaultKind,
  FleetAppend,
  FleetOptions,
  HasNextMode,
  Ordering,
  Sandbox,
  SandboxAccountState,
  SandboxBill,
  SandboxCollateral,
  SandboxCredentials,
  SandboxFeeSetting,
  SandboxFleet,
  SandboxLeverageSetting,
  SandboxModeSetting,
  SandboxOptions,
  SandboxPosition,
  SandboxStats,
} from "./types.ts";
