/**
 * The bearer token's check (`secretsEqual`): constant-time over digests, the expected token's digest
 * kept between requests and made again when the token changes (a new token set in the settings).
 */
import { describe, expect, test } from "@jest/globals";
import { secretsEqual } from "../../src/transport/http";

describe("secretsEqual", () => {
  test("equal secrets only; an empty expected secret never matches", () => {
    const token = "abcdefabcdefabcdefabcdefabcdefab";
    expect(secretsEqual(token, token)).toBe(true);
    expect(secretsEqual(`${token}x`, token)).toBe(false);
    expect(secretsEqual(token.slice(0, -1), token)).toBe(false);
    expect(secretsEqual("", token)).toBe(false);
    expect(secretsEqual("constructor", token)).toBe(false);
    expect(secretsEqual("", "")).toBe(false);
  });

  test("a changed expected secret is the one that matches, at once", () => {
    const first = "first-token-first-token-first-token";
    const second = "second-token-second-token-second-token";
    expect(secretsEqual(first, first)).toBe(true);
    expect(secretsEqual(first, second)).toBe(false);
    expect(secretsEqual(second, second)).toBe(true);
    expect(secretsEqual(second, first)).toBe(false);
    expect(secretsEqual("日本語のトークン", "日本語のトークン")).toBe(true);
  });
});
