import { Code, ConnectError } from "@connectrpc/connect";
import { ERROR_NAME_HEADER } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { badRequest, fieldErrors, forbidden, HttpError, toErrorReply } from "./http-errors.js";

const connect = (code: Code, message = "backend says no", name?: string) => {
  const err = new ConnectError(message, code);
  if (name) err.metadata.set(ERROR_NAME_HEADER, name);
  return err;
};

describe("ConnectError mapping", () => {
  it.each([
    [Code.InvalidArgument, 400, "ValidationError"],
    [Code.OutOfRange, 400, "ValidationError"],
    [Code.Unauthenticated, 401, "Unauthorized"],
    [Code.PermissionDenied, 403, "Forbidden"],
    [Code.NotFound, 404, "NotFound"],
    [Code.AlreadyExists, 409, "Conflict"],
    [Code.Aborted, 409, "Conflict"],
    [Code.FailedPrecondition, 422, "UnprocessableEntity"],
    [Code.ResourceExhausted, 429, "RateLimited"],
  ])("code %s → %i %s with the service's message", (code, status, name) => {
    const out = toErrorReply(connect(code));
    expect(out).toEqual({ status, body: { error: name, message: "backend says no" }, internal: false });
  });

  it.each([Code.Unavailable, Code.DeadlineExceeded])("code %s → 503 ServiceUnavailable, message hidden", (code) => {
    const out = toErrorReply(connect(code, "dial tcp 10.0.0.7:7003: connection refused"));
    expect(out.status).toBe(503);
    expect(out.body.error).toBe("ServiceUnavailable");
    expect(out.body.message).not.toContain("10.0.0.7");
    expect(out.internal).toBe(true);
  });

  it.each([Code.Internal, Code.Unknown, Code.Unimplemented, Code.DataLoss, Code.Canceled])(
    "code %s → 500 InternalError without internals",
    (code) => {
      const out = toErrorReply(connect(code, "pq: relation devices does not exist"));
      expect(out).toEqual({ status: 500, body: { error: "InternalError", message: "internal error" }, internal: true });
    },
  );

  it("takes the error name from herald-error metadata", () => {
    const out = toErrorReply(connect(Code.Aborted, "delivery already started", "CampaignNotCancellable"));
    expect(out).toEqual({
      status: 409,
      body: { error: "CampaignNotCancellable", message: "delivery already started" },
      internal: false,
    });
  });

  it("never lets herald-error rename an internal error", () => {
    expect(toErrorReply(connect(Code.Internal, "x", "Leaky")).body.error).toBe("InternalError");
  });
});

describe("gateway errors", () => {
  it("passes HttpError through with details", () => {
    const details = [{ field: "/app_id", message: "is required" }];
    expect(toErrorReply(badRequest("bad", details))).toEqual({
      status: 400,
      body: { error: "ValidationError", message: "bad", details },
      internal: false,
    });
    expect(toErrorReply(forbidden("not yours")).body).toEqual({ error: "Forbidden", message: "not yours" });
    expect(toErrorReply(new HttpError("ServiceUnavailable", "later")).internal).toBe(true);
  });

  it("turns anything unknown into a bare 500", () => {
    expect(toErrorReply(new Error("secret detail"))).toEqual({
      status: 500,
      body: { error: "InternalError", message: "internal error" },
      internal: true,
    });
    expect(toErrorReply(undefined).status).toBe(500);
  });
});

describe("fastify client errors", () => {
  it("maps a JSON syntax error to 400 without quoting the body", () => {
    const err = Object.assign(new SyntaxError('Unexpected token s in JSON: "secret…'), { statusCode: 400 });
    expect(toErrorReply(err)).toEqual({
      status: 400,
      body: { error: "ValidationError", message: "request body is not valid JSON" },
      internal: false,
    });
  });

  it.each([
    ["FST_ERR_CTP_BODY_TOO_LARGE", 413, "PayloadTooLarge"],
    ["FST_ERR_CTP_INVALID_MEDIA_TYPE", 415, "UnsupportedMediaType"],
    ["FST_ERR_CTP_INVALID_CONTENT_LENGTH", 400, "ValidationError"],
    ["FST_ERR_SOMETHING_NEW", 400, "ValidationError"],
  ])("%s → %i %s", (code, status, name) => {
    const out = toErrorReply({ code, statusCode: status, message: "raw" });
    expect(out.status).toBe(status);
    expect(out.body.error).toBe(name);
    expect(out.body.message).not.toBe("raw");
  });

  it("maps body and query schema violations to 400 with field details", () => {
    const out = toErrorReply({
      validationContext: "body",
      validation: [{ keyword: "type", instancePath: "/contents/en", message: "must be object", params: {} }],
    });
    expect(out).toEqual({
      status: 400,
      body: {
        error: "ValidationError",
        message: "invalid request body: /contents/en must be object",
        details: [{ field: "/contents/en", message: "must be object" }],
      },
      internal: false,
    });
    expect(
      toErrorReply({
        validationContext: "querystring",
        validation: [{ keyword: "maximum", instancePath: "/per_page", message: "must be <= 200", params: {} }],
      }).body.message,
    ).toBe("invalid query parameter: /per_page must be <= 200");
  });

  it("maps a path parameter that cannot be an id to 404", () => {
    const out = toErrorReply({
      validationContext: "params",
      validation: [{ keyword: "format", instancePath: "/id", message: 'must match format "uuid"', params: {} }],
    });
    expect(out.status).toBe(404);
    expect(out.body.error).toBe("NotFound");
  });
});

describe("fieldErrors", () => {
  it("names the missing, unknown and discriminator fields", () => {
    expect(
      fieldErrors([
        {
          keyword: "required",
          instancePath: "",
          message: "must have required property 'name'",
          params: { missingProperty: "name" },
        },
        { keyword: "additionalProperties", instancePath: "/data", message: "x", params: { additionalProperty: "nme" } },
        {
          keyword: "discriminator",
          instancePath: "",
          message: "x",
          params: { error: "mapping", tag: "platform", tagValue: "bb" },
        },
        { keyword: "type", instancePath: "", message: "must be object", params: {} },
      ]),
    ).toEqual([
      { field: "/name", message: "is required" },
      { field: "/data/nme", message: "is not a known field" },
      { field: "/platform", message: "is not one of the allowed values" },
      { field: "/", message: "must be object" },
    ]);
  });
});

describe("fieldErrors of bad keys", () => {
  it("reports a key refused by propertyNames once, by its pointer, cut short and escaped", () => {
    expect(
      fieldErrors([
        {
          keyword: "pattern",
          instancePath: "/contents",
          message: "must match pattern",
          params: {},
          propertyName: "EN",
        },
        {
          keyword: "propertyNames",
          instancePath: "/contents",
          message: "property name must be valid",
          params: { propertyName: "EN" },
        },
      ]),
    ).toEqual([{ field: "/contents/EN", message: "is not an allowed key" }]);
    const [long] = fieldErrors([
      {
        keyword: "propertyNames",
        instancePath: "/data",
        message: "x",
        params: { propertyName: `a/b~${"x".repeat(100)}` },
      },
    ]);
    expect(long!.field).toBe(`/data/a~1b~0${"x".repeat(60)}`);
  });
});
