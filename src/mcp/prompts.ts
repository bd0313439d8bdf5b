import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { isVaultError } from "../core/errors";
import type { CoreServices } from "../core/services";
import { conventionsText, describeConventions } from "../core/services/conventions";
import { isUnder } from "../core/paths";
import { isNotePath } from "../core/vault";

const user = (text: string): GetPromptResult => ({ messages: [{ role: "user", content: { type: "text", text } }] });

async function guard(fn: () => Promise<GetPromptResult>): Promise<GetPromptResult> {
  try {
    return await fn();
  } catch (e) {
    if (isVaultError(e)) throw new Error(e.message);
    throw e;
  }
}

/** A note's text for embedding in a prompt, capped so a prompt never floods the context. */
const PROMPT_NOTE_CAP = 24_000;

/** Prompts built from the vault itself: its conventions, templates, and ways to work with it. */
export function registerPrompts(server: McpServer, services: CoreServices): void {
  const { port, policy, vault } = services;

  server.registerPrompt(
    "conventions",
    { title: "Vault conventions", description: "How this vault is written: link style, properties and their common values, tags, folders." },
    () =>
      guard(async () => {
        await port.ready();
        return user(`Follow this vault's conventions when you write in it.\n\n${conventionsText(describeConventions(port, policy))}`);
      }),
  );

  server.registerPrompt(
    "create-note",
    {
      title: "Create a note",
      description: "Draft a new note in the vault's style, from its templates folder when there is one.",
      argsSchema: { title: z.string(), folder: z.string().optional(), template: z.string().optional() },
    },
    ({ title, folder, template }) =>
      guard(async () => {
        await port.ready();
        const conv = describeConventions(port, policy);
        let templateText = "";
        if (conv.templates_folder) {
          const templates = vault.visibleNotes().filter((f) => isUnder(f.path, conv.templates_folder!));
          const chosen = template
            ? templates.find((f) => f.path === template || f.path.endsWith(`/${template}`) || f.path.endsWith(`/${template}.md`))
            : templates[0];
          if (chosen) templateText = `\n\nStart from the template "${chosen.path}":\n\n${(await port.read(chosen.path)).slice(0, PROMPT_NOTE_CAP)}`;
          else if (templates.length) templateText = `\n\nTemplates available in "${conv.templates_folder}": ${templates.map((t) => t.path).join(", ")}.`;
        }
        const where = folder ? `in the folder "${folder}"` : "in the folder where notes like it live";
        return user(
          `Create a note titled "${title}" ${where}. Follow the vault's conventions:\n\n${conventionsText(conv)}${templateText}\n\n` +
            "Check first with find_notes that no such note exists; link related notes the way this vault links; then create it with write.",
        );
      }),
  );

  server.registerPrompt(
    "search-strategy",
    { title: "How to search this vault", description: "A strategy for finding things here: search, find_notes, grep, links.", argsSchema: { question: z.string().optional() } },
    ({ question }) =>
      guard(async () => {
        await port.ready();
        const stats = await vault.stats();
        return user(
          `${question ? `Question: ${question}\n\n` : ""}To find things in this vault (${stats.notes} notes, ${stats.tags} tags):\n` +
            "1. search with the key words (it ranks by relevance, stems English words, and understands \"phrases\", prefix*, -exclude and OR); filter with folder= or filters={\"tags\": \"…\"}.\n" +
            "2. find_notes when you know (part of) a note's title or alias.\n" +
            "3. grep for exact strings, code, or patterns (regex=true).\n" +
            "4. From a good hit, get_context or get_backlinks/get_outlinks to follow the links the owner made.\n" +
            "5. read with section= to read only the part you need; cite notes by path.",
        );
      }),
  );

  server.registerPrompt(
    "summarize-note",
    { title: "Summarize a note", description: "Summarize one note, with its key points and open questions.", argsSchema: { path: z.string() } },
    ({ path }) =>
      guard(async () => {
        await port.ready();
        const file = vault.requireFile(path);
        if (!isNotePath(file.path)) throw new Error(`"${file.path}" is not a note.`);
        const text = (await port.read(file.path)).slice(0, PROMPT_NOTE_CAP);
        return user(`Summarize the note "${file.path}" in a few sentences, then list its key points and any open questions or tasks.\n\n---\n${text}`);
      }),
  );

  server.registerPrompt(
    "research",
    { title: "Research a topic in the vault", description: "Gather what the vault knows about a topic, with citations.", argsSchema: { topic: z.string() } },
    ({ topic }) =>
      guard(() =>
        Promise.resolve(
          user(
            `Research "${topic}" in this vault. Search for it (and synonyms), read the best sections, follow links from the most relevant notes with get_context, ` +
              "then write a short synthesis that cites every claim by note path, and list what the vault does not say.",
          ),
        ),
      ),
  );

  server.registerPrompt(
    "propose-links",
    { title: "Propose links for a note", description: "Suggest links between this note and others it mentions or relates to.", argsSchema: { path: z.string() } },
    ({ path }) =>
      guard(async () => {
        await port.ready();
        const file = vault.requireFile(path);
        const text = (await port.read(file.path)).slice(0, PROMPT_NOTE_CAP);
        return user(
          `Propose links for "${file.path}". Use get_unlinked_mentions (notes that mention it without linking) and search for its key topics; ` +
            "for each proposal give the exact sentence, the target note, and why. Do not edit anything until the owner agrees.\n\n---\n" +
            text,
        );
      }),
  );
}
