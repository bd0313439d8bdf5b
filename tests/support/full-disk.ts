/** A model folder on a disk with `room` bytes left (ENOSPC past it, as Node reports it); `free()` makes room again. */
import type { ModelFolder } from "../../src/core/search/vector/model-files";

export function fullDisk(real: ModelFolder, room: number): { folder: ModelFolder; free(): void } {
  const folder: ModelFolder = {
    size: (n) => real.size(n),
    read: (n) => real.read(n),
    rename: (a, b) => real.rename(a, b),
    remove: (n) => real.remove(n),
    append: async (n, bytes) => {
      if (bytes.length > room) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      room -= bytes.length;
      await real.append(n, bytes);
    },
  };
  return { folder, free: () => (room = Infinity) };
}
