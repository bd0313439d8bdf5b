/**
 * The git helper (dist/git-helper.js): a small Node process that starts git for the server. On
 * Linux, Node starts a program by forking, which costs in proportion to the process's memory: ~2 ms
 * from a small process, ~20 ms from Obsidian's or a server's holding a large index. The server
 * sends each git call here over IPC instead; this process stays small. Only git runs from here, with
 * the runner's own arguments and safety options (`git-process.ts`).
 */
import type { GitRunOptions } from "../../core/git/runner";
import { createDirectGitRunner, type GitProcessOptions } from "./git-process";

export type HelperRequest =
  | { id: number; setup: GitProcessOptions; args: string[]; opts: Omit<GitRunOptions, "onStdout"> & { stream: boolean } }
  | { id: number; stop: true };
export type HelperReply = { id: number; chunk: string } | { id: number; result: unknown } | { id: number; error: { message: string; missing: boolean } };

function main(): void {
  const send = (m: HelperReply) => process.send?.(m);
  const stopped = new Set<number>();
  process.on("message", (m: HelperRequest) => {
    if ("stop" in m) {
      stopped.add(m.id);
      return;
    }
    const runner = createDirectGitRunner(m.setup);
    runner
      .run(m.args, {
        ...m.opts,
        ...(m.opts.stream
          ? {
              onStdout: (chunk: string) => {
                if (stopped.has(m.id)) return false;
                send({ id: m.id, chunk });
              },
            }
          : {}),
      })
      .then(
        (result) => send({ id: m.id, result }),
        (e: unknown) => send({ id: m.id, error: { message: e instanceof Error ? e.message : String(e), missing: e instanceof Error && e.name === "GitMissingError" } }),
      )
      .finally(() => stopped.delete(m.id));
  });
  process.on("disconnect", () => process.exit(0));
}

main();
