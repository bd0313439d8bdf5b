import type { AccessPolicy } from "../policy";
import type { VaultPort } from "../vault";
import { NoteFinder, type FindNotesHit } from "./find-notes";
import { grepNotes, type GrepRequest, type GrepResult } from "./grep";
import { listFieldValues, type ListTagsResult } from "./tags";

export type { FindNotesHit } from "./find-notes";
export type { GrepMatch, GrepRequest, GrepResult } from "./grep";
export { compileGrepPattern, formatGrep, MAX_LINE_CHARS } from "./grep";
export type { ListTagsResult, TagCount } from "./tags";
export { extractSection, headingsOf, normalizeHeading, type ExtractedSection, type SectionHeading } from "./section";

/** Lookups that need no keyword index: notes by name, text by pattern, tag/field values. */
export interface LookupService {
  /** Notes by title, alias or path; typo-tolerant and prefix-aware. */
  findNotes(query: string, limit: number): Promise<FindNotesHit[]>;
  /** Literal or regex search over note text. `folder` must already be validated. */
  grep(req: GrepRequest): Promise<GrepResult>;
  /** Distinct values of a frontmatter field (inline tags merged for `tags`), with note counts. */
  listTags(field: string, folder: string): Promise<ListTagsResult>;
  /** True when vault changes arrived that the name index has not applied yet (the next lookup applies them). */
  hasPendingWork(): boolean;
  close(): void;
}

export function createLookupService(deps: { port: VaultPort; policy: AccessPolicy }): LookupService {
  const finder = new NoteFinder(deps.port, deps.policy);
  return {
    findNotes: (query, limit) => finder.find(query, limit),
    grep: (req) => grepNotes(deps.port, deps.policy, req),
    listTags: (field, folder) => listFieldValues(deps.port, deps.policy, field, folder),
    hasPendingWork: () => finder.hasPendingWork(),
    close: () => finder.close(),
  };
}
