/** A state store for tests whose files named `prefix…` are not read until `release()` (all files when the prefix is ""). */
import type { MemoryStateStore, StateStore } from "../../src/core/state";

export class GatedStore implements StateStore {
  readonly description = "(gated)";
  private open!: () => void;
  private readonly gate = new Promise<void>((r) => (this.open = r));
  constructor(
    private readonly inner: MemoryStateStore,
    private readonly prefix = "",
  ) {}
  release(): void {
    this.open();
  }
  async read(name: string): Promise<Uint8Array | null> {
    if (name.startsWith(this.prefix)) await this.gate;
    return this.inner.read(name);
  }
  write(name: string, data: Uint8Array | string): Promise<void> {
    return this.inner.write(name, data);
  }
  append(name: string, line: string): Promise<void> {
    return this.inner.append(name, line);
  }
  remove(name: string): Promise<void> {
    return this.inner.remove(name);
  }
}
