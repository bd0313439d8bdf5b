import type { App } from "obsidian";
import type { HostTimers } from "../../core/timers";

/**
 * The main window's timers (the workspace's own element lives there), for the core and the MCP
 * layer: a server's timers must outlive any popout window. `setImmediate` is Electron's (Node's).
 */
export function mainWindowTimers(app: App): HostTimers {
  const win = app.workspace.containerEl.win;
  return {
    setTimeout: (fn, ms) => win.setTimeout(fn, ms),
    clearTimeout: (handle) => win.clearTimeout(handle as number),
    setImmediate: typeof setImmediate === "function" ? (fn) => setImmediate(fn) : undefined,
  };
}
