import type { HostKind } from "../../core/services";
import type { StateStore } from "../../core/state";
import type { VaultPort } from "../../core/vault";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface RuntimeOptions {
  port: VaultPort;
  host: HostKind;
  /** TCP port to listen on (127.0.0.1). 0 picks a free one (tests). */
  listenPort: number;
  /** The current bearer token (read at every request, so Regenerate takes effect at once). */
  token: () => string;
  /** Origins allowed to call (none by default). */
  allowedOrigins: readonly string[];
  writeMode: boolean;
  hiddenFolders?: readonly string[];
  protectedFolders?: readonly string[];
  stateStore: StateStore;
  /** The sql.js WASM bytes (inlined into the bundle by esbuild). */
  sqlWasm: Uint8Array;
  /** Plugin/server version, reported at initialize. */
  version: string;
  log?: (level: LogLevel, message: string) => void;
}

export interface Runtime {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly listenPort: number;
  /** Stops the HTTP server (port free again), closes sessions and background work. */
  close(): Promise<void>;
}

/** Thrown by `startRuntime` when the port is taken; hosts show a notice rather than a stack trace. */
export class PortInUseError extends Error {
  constructor(readonly listenPort: number) {
    super(`Port ${listenPort} is already in use on 127.0.0.1. Another program (or another vault's server) holds it; pick another port in the settings.`);
    this.name = "PortInUseError";
  }
}

export declare function startRuntime(opts: RuntimeOptions): Promise<Runtime>;
