// Preload (`node --require loopback.cjs ...`) that keeps a server on 127.0.0.1: any
// net.Server.listen() call without a host, or with a wildcard host, binds loopback instead.
// server-everything calls `app.listen(PORT)`, which would otherwise bind every interface.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
const WILDCARD = new Set([undefined, null, "", "0.0.0.0", "::", "[::]"]);
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === "object" && !Array.isArray(first)) {
    if (first.path === undefined && WILDCARD.has(first.host)) {
      args[0] = { ...first, host: "127.0.0.1" };
    }
  } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] === "string") {
      if (WILDCARD.has(args[1])) args[1] = "127.0.0.1";
    } else {
      args.splice(1, 0, "127.0.0.1");
    }
  }
  return listen.apply(this, args);
};
