export { createReadService, MAX_READ_MULTIPLE, MAX_INFO_PATHS, MAX_TREE_ENTRIES, DEFAULT_TREE_ENTRIES } from "./read-service";
export type { DirectoryResult, NoteInfo, OutlineHeading, ReadMultipleResult, ReadService, ReadServiceDeps, TreeNode } from "./read-service";
export {
  bodyFirstLine,
  bodyWithLineNumbers,
  DEFAULT_ATTACHMENT_CAP_BYTES,
  DEFAULT_NOTE_CAP_BYTES,
  sizeCapError,
  sizeCapMessage,
  withLineNumbers,
} from "./format";
export { mimeTypeOf, readAttachment, type AttachmentRead } from "./attachment";
