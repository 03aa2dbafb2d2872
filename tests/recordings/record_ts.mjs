// Records real sessions of the official TypeScript SDK client (@modelcontextprotocol/sdk)
// with real servers from npm. Each session launches tap.mjs as its server; the tap runs
// the real server and writes every line that crossed the pipes next to this script.
//
//   (cd tests/recordings && npm ci && node record_ts.mjs)
//
// Sessions (see README.md for what each holds):
//   ts-sdk-everything-tasks.jsonl         task-augmented tools/call, tasks/get, tasks/result
//   ts-sdk-everything-client-ends.jsonl   the client closes with a call still pending
//   ts-sdk-everything-server-dies.jsonl   the server is killed with a call still pending
//   ts-sdk-memory.jsonl                   server-memory: calls, a bad argument, an unknown tool
//   ts-sdk-output-validation.jsonl        a tool whose output breaks its outputSchema
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(here, "node_modules", "@modelcontextprotocol");
const everything = [path.join(modules, "server-everything", "dist", "index.js"), "stdio"];
const memory = [path.join(modules, "server-memory", "dist", "index.js")];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A connected SDK client whose server is the tap recording to `out`. */
async function connect(out, args, env = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(here, "tap.mjs"), path.join(here, out), "--", process.execPath, ...args],
    env: { ...process.env, ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "lowdown-recorder", version: "0.1.0" }, { capabilities: {} });
  await client.connect(transport);
  return { client, transport };
}

/** Calls a tool and keeps whatever comes back, errors included: the recording is the point. */
async function call(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (err) {
    return err;
  }
}

async function tasks() {
  const { client } = await connect("ts-sdk-everything-tasks.jsonl", everything);
  await client.listTools();
  await call(client, "echo", { message: "before the task" });
  // tools/call with params.task: the answer creates a task; tasks/get polls it and
  // tasks/result carries the tool's outcome.
  const stream = client.experimental.tasks.callToolStream(
    { name: "simulate-research-query", arguments: { topic: "tide tables" } },
    CallToolResultSchema,
    { task: { ttl: 60000 } },
  );
  for await (const message of stream) if (message.type === "result" || message.type === "error") break;
  // The same tool without its required argument.
  const bad = client.experimental.tasks.callToolStream(
    { name: "simulate-research-query", arguments: {} },
    CallToolResultSchema,
    { task: { ttl: 60000 } },
  );
  for await (const message of bad) if (message.type === "result" || message.type === "error") break;
  // A task the client cancels with tasks/cancel once it is created.
  const cancelled = client.experimental.tasks.callToolStream(
    { name: "simulate-research-query", arguments: { topic: "cancelled topic" } },
    CallToolResultSchema,
    { task: { ttl: 60000 } },
  );
  for await (const message of cancelled) {
    if (message.type === "taskCreated") {
      await client.experimental.tasks.cancelTask(message.task.taskId);
      break;
    }
    if (message.type === "result" || message.type === "error") break;
  }
  await call(client, "echo", { message: "after the tasks" });
  await client.close();
}

async function clientEnds() {
  const { client } = await connect("ts-sdk-everything-client-ends.jsonl", everything);
  const pending = call(client, "trigger-long-running-operation", { duration: 10, steps: 5 });
  await sleep(300);
  await client.close();
  await pending;
}

async function serverDies() {
  const { client, transport } = await connect("ts-sdk-everything-server-dies.jsonl", everything);
  const pending = call(client, "trigger-long-running-operation", { duration: 10, steps: 5 });
  await sleep(300);
  // SIGUSR1 makes the tap SIGKILL the real server: it dies on its own, as the client sees it.
  process.kill(transport.pid, "SIGUSR1");
  await pending;
  await client.close();
}

async function memorySession() {
  const dir = mkdtempSync(path.join(tmpdir(), "lowdown-memory-"));
  const { client } = await connect("ts-sdk-memory.jsonl", memory, { MEMORY_FILE_PATH: path.join(dir, "memory.jsonl") });
  await client.listTools();
  await call(client, "create_entities", {
    entities: [{ name: "Lisbon", entityType: "city", observations: ["capital of Portugal"] }],
  });
  await call(client, "search_nodes", { query: "Lisbon" });
  await call(client, "read_graph", {});
  await call(client, "create_entities", { entities: "Lisbon" });
  await call(client, "delete_everything", {});
  await client.close();
  rmSync(dir, { recursive: true, force: true });
}

async function outputValidation() {
  const { client } = await connect("ts-sdk-output-validation.jsonl", [path.join(here, "output-schema-server.mjs")]);
  await client.listTools();
  await call(client, "get-forecast", { city: "Lisbon" });
  await call(client, "get-forecast", { city: "Porto" });
  await client.close();
}

await tasks();
await clientEnds();
await serverDies();
await memorySession();
await outputValidation();
