import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema, type ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { isVaultError } from "../core/errors";
import { sizeCapMessage } from "../core/read/format";
import type { CoreServices } from "../core/services";
import { basenameOf, isNotePath, type VaultEvent } from "../core/vault";
import { clearTimer, setTimer, type TimerHandle } from "../core/timers";
import { gitSummary } from "./tools/git-tools";
import { APP_MIME_TYPE, EXPLORER_HTML, EXPLORER_UI_META, EXPLORER_URI } from "./apps/explorer";

/** How many notes `resources/list` shows through the note template (most recently modified first). */
export const NOTE_RESOURCE_LIST_CAP = 500;
const RECENT_COUNT = 20;

const json = (uri: string, value: unknown, stale?: boolean): ReadResourceResult => ({
  contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value) }],
  ...(stale ? { _meta: { index_stale: true } } : {}),
});

export const noteUri = (path: string) => `note://vault/${path.split("/").map(encodeURIComponent).join("/")}`;
export const tocUri = (path: string) => `toc://vault/${path.split("/").map(encodeURIComponent).join("/")}`;

function decodePath(raw: unknown): string {
  const s = Array.isArray(raw) ? String(raw[0]) : String(raw);
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A client-visible error for a resource read (the SDK turns a throw into a JSON-RPC error). */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isVaultError(e)) throw new Error(e.message);
    throw e;
  }
}

/**
 * Resources: vault facts (`config://`, `stats://`, `folders://`, `tags://`, `recent://`), a note's
 * outline (`toc://vault/{path}`) and every note (`note://vault/{path}`), with `list_changed` when notes
 * come and go and `updated` notifications for subscribed resources.
 */
export function registerResources(server: McpServer, services: CoreServices): () => void {
  const { vault, port } = services;
  server.registerResource("config", "config://vault", { title: "Server configuration", description: "Vault name, host, write mode, search modes, git, protected folders.", mimeType: "application/json" }, async (uri) => {
    await port.ready();
    return json(uri.href, {
      vault: port.name,
      host: services.host,
      write_mode: services.writeMode,
      search_modes: services.searchModes(),
      semantic_search_available: services.semantic !== null,
      git: await gitSummary(services),
      protected_folders: services.protectedFolders,
    });
  });
  // The vault explorer (MCP Apps): browse_vault and show_context point to it.
  server.registerResource(
    "explorer",
    EXPLORER_URI,
    { title: "Vault explorer", description: "An interactive view of the vault (folders, search, note preview, links) for clients that show MCP Apps.", mimeType: APP_MIME_TYPE, _meta: EXPLORER_UI_META },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: APP_MIME_TYPE, text: EXPLORER_HTML, _meta: EXPLORER_UI_META }] }),
  );
  server.registerResource("stats", "stats://vault", { title: "Vault statistics", mimeType: "application/json" }, async (uri) => {
    await port.ready();
    return json(uri.href, await vault.stats());
  });
  server.registerResource("folders", "folders://vault", { title: "Folders", mimeType: "application/json" }, async (uri) => {
    await port.ready();
    return json(uri.href, { folders: ["", ...vault.visibleFolders()] });
  });
  server.registerResource("tags", "tags://vault", { title: "Tags with counts", mimeType: "application/json" }, async (uri) => {
    await port.ready();
    const stale = services.pendingWork();
    return json(uri.href, await services.lookup.listTags("tags", ""), stale);
  });
  server.registerResource("recent", "recent://vault", { title: "Recently modified notes", mimeType: "application/json" }, async (uri) => {
    await port.ready();
    const recent = vault
      .visibleNotes()
      .sort((a, b) => b.mtime - a.mtime)
      .slice(0, RECENT_COUNT)
      .map((f) => ({ path: f.path, title: basenameOf(f.path), modified_at: new Date(f.mtime).toISOString() }));
    return json(uri.href, { notes: recent });
  });
  server.registerResource(
    "outline",
    new ResourceTemplate("toc://vault/{+path}", { list: undefined }),
    { title: "A note's outline", description: "Headings with levels and line numbers.", mimeType: "application/json" },
    (uri, vars) =>
      guard(async () => {
        await port.ready();
        const file = vault.requireFile(decodePath(vars.path));
        const meta = port.getMetadata(file.path);
        const headings = (meta?.headings ?? []).map((h) => ({ heading: h.heading, level: h.level, line: h.position.start.line + 1 }));
        return json(uri.href, { path: file.path, headings });
      }),
  );
  server.registerResource(
    "note",
    new ResourceTemplate("note://vault/{+path}", {
      list: async () => {
        await port.ready();
        const notes = vault.visibleNotes().sort((a, b) => b.mtime - a.mtime).slice(0, NOTE_RESOURCE_LIST_CAP);
        return { resources: notes.map((f) => ({ uri: noteUri(f.path), name: f.path, title: basenameOf(f.path), mimeType: "text/markdown", size: f.size })) };
      },
      complete: {
        path: async (value) => {
          await port.ready();
          const v = value.toLowerCase();
          return vault.visibleNotes().filter((f) => f.path.toLowerCase().includes(v)).slice(0, 50).map((f) => f.path);
        },
      },
    }),
    { title: "A note", description: "A note's markdown, frontmatter included.", mimeType: "text/markdown" },
    (uri, vars) =>
      guard(async () => {
        await port.ready();
        const file = vault.requireFile(decodePath(vars.path));
        if (!isNotePath(file.path)) throw new Error(`"${file.path}" is not a note.`);
        // The read cap holds here too (the whole note, frontmatter included, is returned).
        if (file.size > vault.limits.maxNoteBytes) throw new Error(sizeCapMessage(file.path, file.size, vault.limits.maxNoteBytes).replace("read a part with section", "read a part with the read tool's section"));
        return { contents: [{ uri: uri.href, mimeType: "text/markdown", text: await port.read(file.path) }] };
      }),
  );

  // Subscriptions: resources/subscribe → notifications/resources/updated when the resource changes.
  const subscribed = new Set<string>();
  server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, (req) => {
    subscribed.add(req.params.uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    subscribed.delete(req.params.uri);
    return {};
  });

  let listTimer: TimerHandle | null = null;
  const pendingUpdates = new Set<string>();
  let updateTimer: TimerHandle | null = null;
  const flushUpdates = () => {
    updateTimer = null;
    for (const uri of pendingUpdates) if (subscribed.has(uri)) void server.server.sendResourceUpdated({ uri }).catch(() => {});
    pendingUpdates.clear();
  };
  const onChange = (e: VaultEvent) => {
    const paths = e.type === "rename" ? [e.path, e.oldPath] : [e.path];
    if (paths.every((p) => services.policy.isHidden(p))) return;
    if (e.type !== "modify" && !listTimer) {
      listTimer = setTimer(() => {
        listTimer = null;
        if (server.isConnected()) server.sendResourceListChanged();
      }, 200);
    }
    for (const p of paths) {
      pendingUpdates.add(noteUri(p));
      pendingUpdates.add(tocUri(p));
    }
    for (const uri of ["stats://vault", "tags://vault", "recent://vault", "folders://vault"]) pendingUpdates.add(uri);
    if (!updateTimer) updateTimer = setTimer(flushUpdates, 100);
  };
  const unsubscribe = port.onChange(onChange);
  return () => {
    unsubscribe();
    clearTimer(listTimer);
    clearTimer(updateTimer);
  };
}
