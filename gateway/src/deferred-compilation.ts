import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import type { FastifyServerOptions } from "fastify";

/**
 * Request validators (ajv) and response serializers (fast-json-stringify) compiled on a
 * route's first use instead of at start-up. Compiled up front, every route and status
 * walks the shared schemas again: about 250 MB allocated while the gateway starts and an
 * idle heap near 80 MB, twice what it holds after a full collection, when most replicas
 * only ever serve a few of the routes (docs/operations.md, "Memory").
 *
 * compileAll() compiles whatever is still pending: the tests call it after the app is
 * ready, so a schema that cannot compile fails a test rather than a first request.
 */
export class DeferredCompilation {
  private readonly pending = new Set<() => void>();

  /**
   * A function that compiles `compile()` on its first call and then forwards to it. When
   * the compiled function has `errors` (a validator), the wrapper's follow them after each
   * call: what fastify reads of a validator that returned false.
   */
  defer<F extends (data: never) => unknown>(compile: () => F): F {
    let compiled: F | undefined;
    const force = () => {
      compiled ??= compile();
      this.pending.delete(force);
      return compiled;
    };
    this.pending.add(force);
    const deferred = ((data: never) => {
      const fn = compiled ?? force();
      const result = fn(data);
      // ajv's validators carry `errors`; fast-json-stringify's serializers do not.
      if ("errors" in fn) (deferred as { errors?: unknown }).errors = fn.errors;
      return result;
    }) as F;
    return deferred;
  }

  /** Compiles every function not called yet; answers how many there were. */
  compileAll(): number {
    const all = [...this.pending];
    for (const force of all) force();
    return all.length;
  }
}

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>["buildSerializer"]
>;

/** Fastify's own response serializers (fast-json-stringify, as its default), each compiled on first use. */
export function deferredSerializers(deferred: DeferredCompilation): SerializerFactory {
  const buildSerializer = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = buildSerializer(externalSchemas, options);
    return (route) => deferred.defer(() => compile(route));
  };
}
