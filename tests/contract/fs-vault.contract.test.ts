import { FsVault } from "../../src/hosts/node/fs-vault";
import { describeVaultPortContract } from "./vault-port.contract";

describeVaultPortContract("FsVault", (root) => FsVault.open(root, { debounceMs: 30 }), { externalChanges: true });
