/**
 * Test-only crash points of the headless server. `VAULT_MCP_CRASH_AT=<point>` in the environment of
 * the process (never anything a client sends) makes it SIGKILL itself when it reaches that point, so
 * tests can check what a crash right there leaves behind and what the next start repairs. Points:
 * `rename:after-journal` (the rename's journal written, nothing moved yet), `rename:after-move` (moved,
 * no link rewritten), `rename:after-rewrite:<n>` (the n-th linking note rewritten), `write:<n>` (the
 * n-th note written through `process` since start, e.g. by the start-up recovery). The plugin has none.
 */
export const CRASH_ENV = "VAULT_MCP_CRASH_AT";

export function crashPointFromEnv(env: NodeJS.ProcessEnv, log: (message: string) => void): ((point: string) => void) | undefined {
  const at = env[CRASH_ENV]?.trim();
  if (!at) return undefined;
  log(`${CRASH_ENV}=${at}: this process kills itself (SIGKILL) when it reaches that point (a test setting).`);
  return (point) => {
    if (point !== at) return;
    log(`crash point ${point} reached: SIGKILL`);
    process.kill(process.pid, "SIGKILL");
  };
}
