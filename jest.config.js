/** @type {import('jest').Config} */
const common = {
  transform: { "^.+\\.ts$": "<rootDir>/tests/support/esbuild-jest.js", "^.+\\.html$": "<rootDir>/tests/support/text-module.js" },
  // The `obsidian` package ships types only; at run time tests use our stand-in of its API.
  moduleNameMapper: {
    "^obsidian$": "<rootDir>/tests/stand-in/obsidian.ts",
    "\\.wasm$": "<rootDir>/tests/support/wasm-module.js",
    "^virtual:bridge-source$": "<rootDir>/tests/support/bridge-source.js",
    "^virtual:embed-worker-source$": "<rootDir>/tests/support/embed-worker-source.js",
    "^virtual:git-helper-source$": "<rootDir>/tests/support/git-helper-source.js",
  },
  transformIgnorePatterns: ["/node_modules/", "/dist/", "<rootDir>/main\\.js$"],
  testEnvironment: "node",
  setupFiles: ["<rootDir>/tests/support/host-timers.ts"],
};
module.exports = {
  testTimeout: 30000,
  // The run's temp files live in one folder, removed at the end (tests/support/global-setup.js).
  globalSetup: "<rootDir>/tests/support/global-setup.js",
  globalTeardown: "<rootDir>/tests/support/global-teardown.js",
  // A worker whose heap is over this after a test file is replaced by a fresh one. Kept, a worker's
  // heap grew to ~1 GB over the run, and every collection in every later file was slower for it:
  // `npm test` took 7.9 min on 2 workers (14 min of CPU), 4.1 min (7 min) with workers recycled.
  workerIdleMemoryLimit: "512MB",
  projects: [
    { ...common, displayName: "unit", testMatch: ["<rootDir>/tests/**/*.test.ts"], testPathIgnorePatterns: ["/tests/real/"] },
    { ...common, displayName: "real-vaults", testMatch: ["<rootDir>/tests/real/**/*.test.ts"] },
    {
      // The tool suites again, on the Obsidian adapter over the stand-in App: one behaviour, two adapters.
      ...common,
      displayName: "obsidian-adapter",
      testMatch: ["<rootDir>/tests/e2e/{write-tools,read-tools,graph-wired,surface,yaml-values,git-tools,transfer,fetch,prototype-words}.test.ts"],
      setupFiles: ["<rootDir>/tests/support/host-timers.ts", "<rootDir>/tests/support/use-obsidian-adapter.js"],
    },
  ],
};
