// The official TypeScript SDK 1.x client (npm `@modelcontextprotocol/sdk`, the
// last major version that speaks 2025-11-25's tasks) against toolhost serving
// the conformance guest: run by test_handshake_tasks.py.
//
//   node typescript_tasks.mjs stdio <toolhost> <config>
//   node typescript_tasks.mjs http <url>
//
// The client negotiates 2025-11-25 with strict capabilities (so it asks for a
// task only of a server that declares them), lists the tools, and calls with
// `client.experimental.tasks.callToolStream`: `slow_compute` (polled to
// completion), `confirm_delete` (its question answered by the client's
// elicitation handler while `tasks/result` waits) and `failing_job` (a task
// that fails). The SDK parses every answer with its 2025-11-25 schemas. One JSON
// object on stdout says what it saw.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [transportKind, ...rest] = process.argv.slice(2);
const transport =
  transportKind === "stdio"
    ? new StdioClientTransport({ command: rest[0], args: ["serve", "--config", rest[1]], stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(rest[0]));

const client = new Client(
  { name: "toolhost-ts-tasks", version: "1.0.0" },
  { capabilities: { elicitation: {} }, enforceStrictCapabilities: true },
);
const questions = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  questions.push({ message: request.params.message, meta: request.params._meta ?? null });
  return { action: "accept", content: { confirm: true } };
});

/** Every message `callToolStream` yields for one call, errors as text. */
async function stream(name, args) {
  const seen = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    undefined,
    { timeout: 60_000 },
  )) {
    switch (message.type) {
      case "taskCreated":
      case "taskStatus":
        seen.push({ type: message.type, status: message.task.status, taskId: message.task.taskId });
        break;
      case "result":
        seen.push({ type: "result", result: message.result });
        break;
      case "error":
        seen.push({ type: "error", error: String(message.error?.message ?? message.error) });
        break;
    }
  }
  return seen;
}

await client.connect(transport);
const report = { taskCapability: client.getServerCapabilities()?.tasks ?? null };
const { tools } = await client.listTools();
report.execution = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? null]));
report.slow = await stream("slow_compute", { seconds: 1, label: "ts" });
report.confirm = await stream("confirm_delete", { filename: "b.txt" });
report.failing = await stream("failing_job", {});
report.questions = questions;
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
