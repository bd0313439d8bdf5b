// The core's timers, as the headless host gives them (src/core/timers.ts): every test file runs with them.
import { useHostTimers } from "../../src/core/timers";
import { nodeTimers } from "../../src/hosts/common/node-timers";

useHostTimers(nodeTimers);
