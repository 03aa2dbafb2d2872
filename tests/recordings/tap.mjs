// A transparent tap between an MCP client and a real stdio server: it spawns the server,
// relays both pipes byte for byte, and writes every line that crossed them to a JSONL
// recording, one {direction, at_ms, line} object per line (the format of
// examples/transcripts/, which `classify` vectors replay).
//
//   node tap.mjs OUT.jsonl -- COMMAND [ARGS...]
//
// A client launches the tap as its "server". `at_ms` is milliseconds since the tap started.
// Lines are written synchronously, so a client that kills the tap loses nothing recorded.
// SIGUSR1 makes the tap kill the server with SIGKILL: a server that dies on its own, with
// requests pending, as the client sees it.
import { spawn } from "node:child_process";
import { openSync, writeSync } from "node:fs";

const [out, dashes, command, ...args] = process.argv.slice(2);
if (!out || dashes !== "--" || !command) {
  process.stderr.write("usage: node tap.mjs OUT.jsonl -- COMMAND [ARGS...]\n");
  process.exit(2);
}
const fd = openSync(out, "w");
const t0 = performance.now();
const at = () => Math.round((performance.now() - t0) * 1000) / 1000;

/** Splits one direction's bytes into lines and records each (without its "\n"). */
function recorder(direction) {
  let tail = Buffer.alloc(0);
  const write = (bytes) =>
    writeSync(fd, JSON.stringify({ direction, at_ms: at(), line: bytes.toString("utf8") }) + "\n");
  return {
    chunk(buf) {
      let data = tail.length ? Buffer.concat([tail, buf]) : buf;
      let nl;
      while ((nl = data.indexOf(0x0a)) !== -1) {
        write(data.subarray(0, nl));
        data = data.subarray(nl + 1);
      }
      tail = Buffer.from(data);
    },
    end() {
      if (tail.length) write(tail);
      tail = Buffer.alloc(0);
    },
  };
}

const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const fromClient = recorder("client_to_server");
const fromServer = recorder("server_to_client");

process.stdin.on("data", (buf) => {
  fromClient.chunk(buf);
  if (!child.stdin.destroyed) child.stdin.write(buf);
});
process.stdin.on("end", () => {
  fromClient.end();
  child.stdin.end();
});
child.stdin.on("error", () => {});
child.stdout.on("data", (buf) => {
  fromServer.chunk(buf);
  process.stdout.write(buf);
});
child.stdout.on("end", () => fromServer.end());
child.on("exit", (code, signal) => {
  fromServer.end();
  process.exitCode = code ?? 128 + (signal === "SIGKILL" ? 9 : 15);
  // Let stdout drain, then leave even if the client keeps our stdin open.
  process.stdout.end(() => process.exit());
});
process.on("SIGUSR1", () => child.kill("SIGKILL"));
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => child.kill(sig));
