import { describe, expect, it, vi } from "vitest";
import { DeferredCompilation } from "./deferred-compilation.js";

type Validate = ((data: unknown) => boolean) & { errors?: string[] | null };

const positive = (): Validate => {
  const validate = ((n: unknown) => {
    validate.errors = typeof n === "number" && n > 0 ? null : ["must be positive"];
    return validate.errors === null;
  }) as Validate;
  return validate;
};

describe("DeferredCompilation", () => {
  it("compiles on the first call, once, and forwards the compiled function's errors", () => {
    const deferred = new DeferredCompilation();
    const compile = vi.fn(positive);
    const validate = deferred.defer(compile) as Validate;
    expect(compile).not.toHaveBeenCalled();
    expect(validate(-1)).toBe(false);
    expect(validate.errors).toEqual(["must be positive"]);
    expect(validate(2)).toBe(true);
    expect(validate.errors).toBeNull();
    expect(compile).toHaveBeenCalledTimes(1);
    expect(deferred.compileAll()).toBe(0);
  });

  it("leaves a serializer's wrapper without errors", () => {
    const serialize = new DeferredCompilation().defer(() => (data: unknown) => JSON.stringify(data));
    expect(serialize({ a: 1 })).toBe('{"a":1}');
    expect("errors" in serialize).toBe(false);
  });

  it("compileAll compiles what no call has, and a schema that cannot compile throws there", () => {
    const deferred = new DeferredCompilation();
    const compile = vi.fn(positive);
    const used = deferred.defer(compile);
    deferred.defer(compile);
    used(1);
    expect(deferred.compileAll()).toBe(1);
    expect(compile).toHaveBeenCalledTimes(2);
    deferred.defer(() => {
      throw new Error("schema is invalid");
    });
    expect(() => deferred.compileAll()).toThrow("schema is invalid");
  });
});
