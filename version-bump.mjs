// `npm version <x.y.z>` runs this (the "version" script) after bumping package.json and
// package-lock.json: manifest.json takes the same version, and versions.json maps it to the
// manifest's minAppVersion (Obsidian reads versions.json to offer users on older apps an older
// release). Both files are staged so npm's version commit and tag hold them.
import { readFileSync, writeFileSync } from "node:fs";

const version = process.env.npm_package_version;
if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
  console.error(`version-bump: expected a plain x.y.z version from npm, got ${JSON.stringify(version)}`);
  process.exit(1);
}

const manifest = JSON.parse(readFileSync("manifest.json", "utf8"));
const { minAppVersion } = manifest;
manifest.version = version;
writeFileSync("manifest.json", JSON.stringify(manifest, null, 2) + "\n");

const versions = JSON.parse(readFileSync("versions.json", "utf8"));
versions[version] = minAppVersion;
writeFileSync("versions.json", JSON.stringify(versions, null, 2) + "\n");
