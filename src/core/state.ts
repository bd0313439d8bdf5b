/**
 * Where the server keeps its own state (search index, activity log): the plugin's data folder inside
 * Obsidian, a per-vault state folder headless — never among the notes. Hosts implement it.
 */
export interface StateStore {
  /** The file's bytes, or null when it does not exist. */
  read(name: string): Promise<Uint8Array | null>;
  /**
   * Optional: the file's bytes read into `room(size)` (an array of exactly `size` bytes the caller
   * gives, e.g. carved from a buffer it reuses; undefined for one of the store's own), or null when
   * it does not exist. The result may be shorter than `size` when the file shrank meanwhile.
   */
  readInto?(name: string, room: (size: number) => Uint8Array | undefined): Promise<Uint8Array | null>;
  /** Writes atomically (temp file, then rename): a crash leaves the old or the new file, never half. */
  write(name: string, data: Uint8Array | string): Promise<void>;
  /** Appends a line (for logs); creates the file. */
  append(name: string, line: string): Promise<void>;
  remove(name: string): Promise<void>;
  /** A description for humans (logs, status), vault-relative or `~`-relative; never used for I/O. */
  readonly description: string;
}

/** A StateStore in memory, for tests and for `--no-state`. */
export class MemoryStateStore implements StateStore {
  readonly files = new Map<string, Uint8Array>();
  readonly description = "(memory)";
  read(name: string): Promise<Uint8Array | null> {
    return Promise.resolve(this.files.get(name) ?? null);
  }
  write(name: string, data: Uint8Array | string): Promise<void> {
    this.files.set(name, typeof data === "string" ? new TextEncoder().encode(data) : data.slice());
    return Promise.resolve();
  }
  append(name: string, line: string): Promise<void> {
    const old = this.files.get(name) ?? new Uint8Array();
    const add = new TextEncoder().encode(line.endsWith("\n") ? line : line + "\n");
    const out = new Uint8Array(old.length + add.length);
    out.set(old);
    out.set(add, old.length);
    this.files.set(name, out);
    return Promise.resolve();
  }
  remove(name: string): Promise<void> {
    this.files.delete(name);
    return Promise.resolve();
  }
}
