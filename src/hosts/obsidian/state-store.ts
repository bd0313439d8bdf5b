import { normalizePath, type DataAdapter } from "obsidian";
import type { StateStore } from "../../core/state";

/**
 * The server's own state (search index, activity log) in the plugin's data folder
 * (`<configDir>/plugins/<id>/`), through `vault.adapter` — never among the notes.
 *
 * Writes are atomic: the bytes go to a temp file that is then renamed over the target. Obsidian's
 * adapter refuses to rename onto an existing file, so the old file is first renamed to `<name>.bak`,
 * and `read` falls back to it if a crash left no `<name>`.
 */
export class ObsidianStateStore implements StateStore {
  private readonly dir: string;

  constructor(
    private readonly adapter: DataAdapter,
    dir: string,
  ) {
    this.dir = normalizePath(dir);
  }

  get description(): string {
    return this.dir;
  }

  private path(name: string): string {
    if (!name || name.split(/[\\/]/).some((s) => s === ".." || s === "")) throw new Error(`Invalid state file name: ${name}`);
    return normalizePath(`${this.dir}/${name}`);
  }

  private async ensureParent(path: string): Promise<void> {
    const parent = path.slice(0, path.lastIndexOf("/"));
    if (parent && !(await this.adapter.exists(parent))) await this.adapter.mkdir(parent);
  }

  async read(name: string): Promise<Uint8Array | null> {
    const p = this.path(name);
    for (const candidate of [p, `${p}.bak`]) {
      if (await this.adapter.exists(candidate)) return new Uint8Array(await this.adapter.readBinary(candidate));
    }
    return null;
  }

  async write(name: string, data: Uint8Array | string): Promise<void> {
    const p = this.path(name);
    await this.ensureParent(p);
    // The same temp name as the headless host's atomic writes, so either host's start-up removes a
    // leftover one (see hosts/common/leftovers.ts).
    const slash = p.lastIndexOf("/");
    const tmp = `${p.slice(0, slash + 1)}.${p.slice(slash + 1).slice(0, 40)}.${randomHex(6)}.vault-mcp.tmp`;
    if (typeof data === "string") await this.adapter.write(tmp, data);
    else await this.adapter.writeBinary(tmp, data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer);
    const bak = `${p}.bak`;
    try {
      if (await this.adapter.exists(p)) {
        if (await this.adapter.exists(bak)) await this.adapter.remove(bak);
        await this.adapter.rename(p, bak);
      }
      await this.adapter.rename(tmp, p);
    } catch (e) {
      if (await this.adapter.exists(tmp)) await this.adapter.remove(tmp);
      throw e;
    }
    if (await this.adapter.exists(bak)) await this.adapter.remove(bak);
  }

  async append(name: string, line: string): Promise<void> {
    const p = this.path(name);
    await this.ensureParent(p);
    await this.adapter.append(p, line.endsWith("\n") ? line : line + "\n");
  }

  async remove(name: string): Promise<void> {
    const p = this.path(name);
    for (const candidate of [p, `${p}.bak`]) if (await this.adapter.exists(candidate)) await this.adapter.remove(candidate);
  }
}

function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
