import type { ToolDef } from "../tool";
import { gitTools } from "./git-tools";
import { filesTools } from "./files-tools";
import { appTools } from "./app-tools";
import { graphTools } from "./graph-tools";
import { readTools } from "./read-tools";
import { searchTools } from "./search-tools";
import { semanticTools } from "./semantic-tools";
import { writeTools } from "./write-tools";
import { vaultTools } from "./vault-tools";

/** Every tool the server knows, in the order tools/list shows them. */
export const allTools: ToolDef[] = [...(vaultTools as unknown as ToolDef[]), ...searchTools, ...semanticTools, ...(readTools as unknown as ToolDef[]), ...(writeTools as unknown as ToolDef[]), ...graphTools, ...(gitTools as unknown as ToolDef[]), ...(filesTools as unknown as ToolDef[]), ...(appTools as unknown as ToolDef[])];
