import type { ToolDef } from "../tool";
import { searchTools } from "./search-tools";
import { vaultTools } from "./vault-tools";

/** Every tool the server knows, in the order tools/list shows them. */
export const allTools: ToolDef[] = [...(vaultTools as unknown as ToolDef[]), ...searchTools];
