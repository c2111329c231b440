// Preloaded into the conformance harness (`node --require loopback.cjs ...`): every
// listen() binds 127.0.0.1, whatever host (or none) the caller gave, so that no mock server
// of the harness is ever reachable from another machine.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first === undefined || typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen([port][, host][, backlog][, callback])
    if (args.length === 0) args.push(0);
    if (typeof args[1] === "string") args[1] = "127.0.0.1";
    else args.splice(1, 0, "127.0.0.1");
  } else if (first !== null && typeof first === "object" && !("path" in first) && !("fd" in first) && !("_handle" in first)) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
