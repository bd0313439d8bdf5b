import { describe, expect, test } from "@jest/globals";
import { promises as fsp } from "node:fs";
import { soon, TURN_MS } from "../../src/core/timers";

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* a slice of work */
  }
};

/**
 * The engines' slices (`soon`) share one turn of the event loop: their immediates would otherwise all
 * run in one check phase, one after the other, while a request that arrived waits for the next poll.
 */
describe("soon: one turn of the event loop for every engine's slices", () => {
  test("a slice that finds the turn used up runs after the loop has polled for I/O; the ones before it ran in the turn", async () => {
    const order: string[] = [];
    await new Promise<void>((done) => {
      soon(() => {
        order.push("A");
        // Done long before B's slice ends: answered at the next poll phase.
        void fsp.stat(__filename).then(() => order.push("io"));
      });
      soon(() => {
        order.push("B");
        busy(TURN_MS * 1.5);
      });
      soon(() => {
        order.push("C");
        done();
      });
    });
    // A and B share the turn (B began within it); C began past it: it waited for the I/O.
    expect(order).toEqual(["A", "B", "io", "C"]);
  });

  test("short slices all run in one turn", async () => {
    const order: number[] = [];
    let io = -1;
    await new Promise<void>((done) => {
      for (let i = 0; i < 5; i++)
        soon(() => {
          if (i === 0) void fsp.stat(__filename).then(() => (io = order.length));
          order.push(i);
          if (i === 4) done();
        });
    });
    expect(order).toEqual([0, 1, 2, 3, 4]);
    // The I/O was answered after all five (same turn), not between them.
    await new Promise((r) => setTimeout(r, 20));
    expect(io).toBe(5);
  });
});
