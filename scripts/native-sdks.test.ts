import { describe, expect, it } from "vitest";
import { surefireCounts, xctestCounts } from "./native-sdks.mjs";

describe("the native suites' closing counts", () => {
  it("reads XCTest's line of all suites, with and without skips", () => {
    const out = [
      "Test Suite 'RetryTests' passed at 2026-11-28 10:00:00.000.",
      "\t Executed 4 tests, with 0 failures (0 unexpected) in 0.010 (0.010) seconds",
      "Test Suite 'All tests' failed at 2026-11-28 10:00:01.000.",
      "\t Executed 31 tests, with 2 tests skipped and 1 failure (0 unexpected) in 2.5 (2.6) seconds",
    ].join("\n");
    expect(xctestCounts(out)).toEqual({ passed: 28, failed: 1, skipped: 2 });
    expect(xctestCounts("\t Executed 1 test, with 0 failures (0 unexpected) in 0.1 (0.1) seconds")).toEqual({
      passed: 1,
      failed: 0,
      skipped: 0,
    });
    expect(xctestCounts("error: build failed")).toBeUndefined();
  });

  it("sums Surefire's module summaries, not its per-class lines", () => {
    const out = [
      "[INFO] Tests run: 5, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in io.herald.core.RetryTest",
      "[ERROR] Tests run: 7, Failures: 1, Errors: 1, Skipped: 0, Time elapsed: 0.3 s <<< FAILURE! - in io.herald.core.SyncTest",
      "[INFO] Results:",
      "[ERROR] Tests run: 12, Failures: 1, Errors: 1, Skipped: 0",
      "[INFO] Tests run: 9, Failures: 0, Errors: 0, Skipped: 1",
    ].join("\n");
    expect(surefireCounts(out)).toEqual({ passed: 18, failed: 2, skipped: 1 });
    expect(surefireCounts("[ERROR] COMPILATION ERROR")).toBeUndefined();
  });
});
