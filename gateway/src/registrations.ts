import { Code, ConnectError } from "@connectrpc/connect";
import type { RegisterDeviceRequest, RegisterDeviceResponse } from "@herald/proto/device";
import { Coalescer, CoalescerFullError, type ItemResult } from "@herald/runtime";
import type { DeviceClient } from "./backends.js";

/** Registrations per RegisterDevices call: the registry's own limit is 1,000. */
const MAX_BATCH = 256;
/** RegisterDevices calls in flight: each holds one registry database connection. */
const MAX_IN_FLIGHT = 2;

/**
 * Device registrations of all requests of this gateway, coalesced: concurrent
 * `POST /v1/devices/register` calls leave together as one RegisterDevices RPC, which the
 * registry writes in one statement and one commit. A lone registration leaves at once;
 * under load, batches grow while earlier ones are in flight (group commit). Each request
 * still gets its own answer, and an invalid registration fails only its own request, with
 * the same INVALID_ARGUMENT RegisterDevice would have given.
 */
export class Registrations {
  private readonly coalescer: Coalescer<RegisterDeviceRequest, RegisterDeviceResponse>;

  constructor(devices: DeviceClient, opts: { maxBatch?: number; maxInFlight?: number } = {}) {
    this.coalescer = new Coalescer(
      async (batch) => {
        const { results } = await devices.registerDevices({ devices: batch });
        return results.map(
          (r): ItemResult<RegisterDeviceResponse> =>
            r.result.case === "registered"
              ? { ok: true, value: r.result.value }
              : {
                  ok: false,
                  error: new ConnectError(r.result.value ?? "invalid registration", Code.InvalidArgument),
                },
        );
      },
      { maxBatch: opts.maxBatch ?? MAX_BATCH, maxInFlight: opts.maxInFlight ?? MAX_IN_FLIGHT },
    );
  }

  async register(request: RegisterDeviceRequest): Promise<RegisterDeviceResponse> {
    try {
      return await this.coalescer.submit(request);
    } catch (err) {
      // Too many registrations waiting: the registry is saturated, the client retries later.
      if (err instanceof CoalescerFullError) throw new ConnectError(err.message, Code.Unavailable);
      throw err;
    }
  }
}
