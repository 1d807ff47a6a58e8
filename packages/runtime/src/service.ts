// What a process needs to start as a service and nothing more: configuration from the
// environment, the logger, the start-up and shutdown path. A program that is no Herald
// role (the provider simulator) imports this alone rather than the index, which loads
// PostgreSQL, NATS, Connect and protobuf with it.
export * from "./env.js";
export * from "./logger.js";
export * from "./run-service.js";
