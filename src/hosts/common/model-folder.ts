/**
 * The model folder headless: files under the state folder's `models/`, appended as they download
 * and renamed into place when complete. Paths stay inside that folder.
 */
import { promises as fsp } from "node:fs";
import * as nodePath from "node:path";
import type { ModelFolder } from "../../core/search/vector/model-files";

export class FsModelFolder implements ModelFolder {
  constructor(private readonly dir: string) {}

  private abs(name: string): string {
    const p = nodePath.resolve(this.dir, name);
    if (!p.startsWith(nodePath.resolve(this.dir) + nodePath.sep)) throw new Error(`"${name}" is not inside the model folder`);
    return p;
  }

  async size(name: string): Promise<number | null> {
    try {
      return (await fsp.stat(this.abs(name))).size;
    } catch {
      return null;
    }
  }

  async read(name: string): Promise<Uint8Array | null> {
    try {
      return await fsp.readFile(this.abs(name));
    } catch {
      return null;
    }
  }

  async append(name: string, bytes: Uint8Array): Promise<void> {
    const p = this.abs(name);
    await fsp.mkdir(nodePath.dirname(p), { recursive: true });
    await fsp.appendFile(p, bytes);
  }

  async rename(from: string, to: string): Promise<void> {
    await fsp.rename(this.abs(from), this.abs(to));
  }

  async remove(name: string): Promise<void> {
    await fsp.rm(this.abs(name), { force: true });
  }
}
