import type { ToolDef } from "../tool";
import { vaultTools } from "./vault-tools";

/** Every tool the server knows, in the order tools/list shows them. */
export const allTools: ToolDef[] = [...(vaultTools as unknown as ToolDef[])];
