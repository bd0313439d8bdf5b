import type { App } from "obsidian";
import { ObsidianVault } from "../../src/hosts/obsidian/adapter";
import { describeVaultPortContract } from "../contract/vault-port.contract";
import { createTestApp } from "../stand-in/obsidian";

// The stand-in does not watch the folder, so changes made by other programs are not part of this run.
describeVaultPortContract("ObsidianVault over the stand-in", async (root) => new ObsidianVault(createTestApp(root).app as unknown as App), {
  externalChanges: false,
});
