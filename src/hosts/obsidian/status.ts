/** What the server is doing, as shown in the status bar and the settings tab. */
export type ServerState =
  | { kind: "stopped" }
  | { kind: "starting" }
  | {
      kind: "listening";
      listenPort: number;
      url: string;
      indexing?: IndexProgress;
      embedding?: IndexProgress;
      pushError?: string;
      download?: { done: number; total: number };
      /** Embeddings while not ready, in embeddings_status's words (state, a few words, a sentence). */
      embeddings?: { state: string; text: string; description: string };
    }
  | { kind: "error"; message: string };

/** How far the first build of the search index (or the embedding of sections) has come, while it runs. */
export interface IndexProgress {
  indexed: number;
  total: number;
}

/** The status bar text: "MCP: indexing 1234/10000" / "MCP: listening on :PORT" / "MCP: stopped" / "MCP: error". */
export function statusText(state: ServerState): string {
  switch (state.kind) {
    case "listening":
      if (state.indexing) {
        // Before the notes are counted there is no total to show yet.
        return state.indexing.total > 0 ? `MCP: indexing ${state.indexing.indexed}/${state.indexing.total}` : "MCP: indexing";
      }
      if (state.download) return `MCP: downloading the model runtime ${megabytes(state.download.done)}/${megabytes(state.download.total)} MB`;
      if (state.embeddings) return `MCP: ${state.embeddings.text}`;
      if (state.embedding && state.embedding.total > 0) return `MCP: embedding ${state.embedding.indexed}/${state.embedding.total}`;
      if (state.pushError) return "MCP: push failed";
      return `MCP: listening on :${state.listenPort}`;
    case "starting":
      return "MCP: starting";
    case "error":
      return "MCP: error";
    case "stopped":
      return "MCP: stopped";
  }
}

/** A longer sentence for tooltips and the settings tab. */
export function statusDescription(state: ServerState): string {
  switch (state.kind) {
    case "listening":
      if (state.indexing) return `The server is listening at ${state.url}. The search index is being built${state.indexing.total > 0 ? ` (${state.indexing.indexed} of ${state.indexing.total} notes)` : ""}; search answers once it is done.`;
      if (state.download) return `The server is listening at ${state.url}. The built-in model's runtime is being downloaded (once); semantic search starts when it is there.`;
      if (state.embeddings) return `The server is listening at ${state.url}. ${state.embeddings.description}`;
      if (state.embedding) return `The server is listening at ${state.url}. Sections are being embedded for semantic search (${state.embedding.indexed} of ${state.embedding.total}); semantic answers cover what is embedded so far.`;
      if (state.pushError) return `The server is listening at ${state.url}. The last commit made through it was not pushed: ${state.pushError}`;
      return `The server is listening at ${state.url}.`;
    case "starting":
      return "The server is starting.";
    case "error":
      return state.message;
    case "stopped":
      return "The server is stopped.";
  }
}

function megabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0);
}

/** The status bar item. */
export class StatusBar {
  constructor(private readonly el: HTMLElement) {
    el.addClass("vault-mcp-status");
  }

  show(state: ServerState): void {
    this.el.setText(statusText(state));
    this.el.setAttr("aria-label", statusDescription(state));
    this.el.toggleClass("mod-error", state.kind === "error" || (state.kind === "listening" && state.pushError !== undefined));
  }
}
