export { createGraphService, DEFAULT_CONTEXT_CAPS } from "./service";
export type {
  Backlink,
  BacklinksResult,
  BrokenLink,
  ConnectionResult,
  ConnectionStep,
  ContextBacklink,
  ContextCaps,
  ContextOutlink,
  GraphService,
  GraphServiceDeps,
  GraphStatus,
  NoteContext,
  NoteRef,
  Outlink,
  OutlinksResult,
  RankedNote,
  RecentNote,
} from "./service";
export type { MentionSearch, MentionsResult, UnlinkedMention } from "./mentions";
export { LinkGraph, nameKey } from "./link-graph";
export { fragmentExists, linkHeadingKey } from "./fragments";
export { MemoryVault } from "../memory-vault";
export type { GraphLink, GraphOptions, GraphScheduler } from "./types";
