import { describe, expect, test } from "@jest/globals";
import { promises as fsp } from "node:fs";
import { soon, TURN_MS } from "../../src/core/timers";
import { whenListed, type VaultPort } from "../../src/core/vault";

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

describe("whenListed", () => {
  test("callers that waited for the listing go on in a task of their own; once it was seen done, a call goes on at once", async () => {
    let listed!: () => void;
    const listing = new Promise<void>((r) => (listed = r));
    const port = { listed: () => listing, ready: () => listing } as unknown as VaultPort;
    const order: string[] = [];
    const waiting = whenListed(port).then(() => order.push("waited"));
    listed();
    // A task queued after the listing ended runs before the caller that waited for it.
    setImmediate(() => order.push("task"));
    await waiting;
    expect(order).toEqual(["task", "waited"]);
    // Seen done: no task in between (a search calls it each time).
    setImmediate(() => order.push("task 2"));
    await whenListed(port).then(() => order.push("later"));
    expect(order).toEqual(["task", "waited", "later"]);
  });
});
