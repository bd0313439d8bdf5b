import { promises as fsp } from "node:fs";
import path from "node:path";
import type { GitFiles } from "../../core/git/service";

/**
 * Files of the repository's git folder (`info/exclude`), at the paths git itself printed
 * (`rev-parse --git-path`, relative to the vault folder git runs in), for both hosts.
 */
export function createGitFiles(cwd: string): GitFiles {
  const abs = (rel: string) => path.resolve(cwd, rel);
  return {
    read: (rel) => fsp.readFile(abs(rel), "utf8").catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? null : Promise.reject(e))),
    append: async (rel, text) => {
      await fsp.mkdir(path.dirname(abs(rel)), { recursive: true });
      await fsp.appendFile(abs(rel), text, "utf8");
    },
  };
}
