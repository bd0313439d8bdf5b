import * as path from "node:path";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { describeVaultPortContract } from "./vault-port.contract";

describeVaultPortContract("FsVault", (root) => FsVault.open(root, { debounceMs: 30 }), { externalChanges: true });

// The first listing's walk in its worker thread (dist/scan-worker.js, as the CLI opens a vault).
const scanWorkerFile = path.resolve(__dirname, "../../dist/scan-worker.js");
describeVaultPortContract("FsVault, listed by its worker", (root) => FsVault.open(root, { debounceMs: 30, scanWorkerFile }), { externalChanges: true });
