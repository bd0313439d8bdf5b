export { createWriteService } from "./write-service";
export type {
  Actor,
  DeleteResult,
  EditRequest,
  EditResult,
  FrontmatterRequest,
  FrontmatterResult,
  PutBytesRequest,
  RenameRecoveryReport,
  RenameRequest,
  RenameResultOut,
  TagsRequest,
  TagsResult,
  WriteMode,
  WriteRequest,
  WriteResult,
  WriteService,
  WriteServiceDeps,
} from "./write-service";
export { AutoApprove, type Confirmer, type ConfirmRequest } from "./confirm";
export { ActivityLog, ACTIVITY_FILE, type ActivityEntry } from "./activity";
export { unifiedDiff, diffLines } from "./diff";
export { findMatches, normalizeForMatch, describeMiss } from "./edit-match";
export { encodeBase64, encodeBase64InSteps, decodeBase64, decodeBase64InSteps } from "./base64";
export type { ChangeCommitter, CommitOutcome, CommittedChange } from "./commit";
export { RenameJournal, RENAME_JOURNAL_FILE, finishInterruptedRename, type RenameJournalEntry, type RecoveredRename } from "./rename-journal";
