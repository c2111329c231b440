// Preloaded into the conformance harness (`node --require loopback.cjs ...`): every
// listen() binds 127.0.0.1, whatever host (or none) the caller gave, so that no mock server
// of the harness is ever reachable from another machine.
//
// The socket is bound synchronously (on a handle made here) rather than by passing a host to
// listen(): with a host, node binds after an asynchronous lookup, and a caller that reads
// server.address() right after listen(0), as some scenarios do, would read null.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;

function onLoopback(server, port, rest) {
  const handle = net._createServerHandle("127.0.0.1", Number(port) || 0, 4);
  if (typeof handle === "number") {
    const error = new Error(`listen 127.0.0.1:${port} failed (${handle})`);
    process.nextTick(() => server.emit("error", error));
    return server;
  }
  return listen.apply(server, [handle, ...rest]);
}

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first === undefined || typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen([port][, host][, backlog][, callback])
    const rest = args.slice(1);
    if (typeof rest[0] === "string") rest.shift();
    return onLoopback(this, first, rest);
  }
  if (first !== null && typeof first === "object" && !("path" in first) && !("fd" in first) && !("_handle" in first) && ("port" in first || "host" in first)) {
    // listen(options[, callback]): a port (or none) on some host
    const rest = args.slice(1);
    if (first.backlog !== undefined) rest.unshift(first.backlog);
    return onLoopback(this, first.port, rest);
  }
  return listen.apply(this, args);
};
