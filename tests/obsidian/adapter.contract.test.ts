import type { App } from "obsidian";
import { ObsidianVault } from "../../src/hosts/obsidian/adapter";
import { describeVaultPortContract } from "../contract/vault-port.contract";
import { createTestApp, type App as StandInApp } from "../stand-in/obsidian";

// The stand-in watches the folder (as Obsidian does), so changes made by other programs are covered too.
const apps: StandInApp[] = [];
afterEach(() => {
  for (const app of apps.splice(0)) app.vault.stopWatching();
});

describeVaultPortContract(
  "ObsidianVault over the stand-in",
  async (root) => {
    const { app } = createTestApp(root, { watch: true });
    apps.push(app);
    return new ObsidianVault(app as unknown as App);
  },
  { externalChanges: true },
);
