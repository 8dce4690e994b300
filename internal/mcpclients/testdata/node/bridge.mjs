// bridge.mjs SUPERGATEWAY-ARGS…: supergateway (a stdio-to-Streamable-HTTP
// bridge), with its HTTP server bound to 127.0.0.1 and on the port the
// system picks when --port is 0. supergateway listens on every interface
// and has no option to choose one; the tests serve nothing beyond this
// machine. Once it listens, it writes "bridge listening on 127.0.0.1:PORT"
// to stderr.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number") {
    const cb = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
    this.once("listening", () => {
      const a = this.address();
      process.stderr.write(`bridge listening on ${a.address}:${a.port}\n`);
    });
    return listen.call(this, args[0], "127.0.0.1", cb);
  }
  return listen.apply(this, args);
};
await import("supergateway/dist/index.js");
