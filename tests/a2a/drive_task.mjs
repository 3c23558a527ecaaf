// Drives one task of the drive's agent end to end with the official A2A JavaScript SDK (npm
// `@a2a-js/sdk`, protocol 1.0), as an outside client would: the card resolved from the drive, a
// message sent over JSON-RPC with the API token as bearer (the SDK's own message, whose unset
// `contextId` and `taskId` are empty strings), the task read back and listed, and two refusals
// mapped to the SDK's own error classes. Prints what it saw as one JSON object for the
// end-to-end test (`agent_interop::the_javascript_a2a_sdk_drives_a_task_end_to_end`) to check.
//
// Usage: node drive_task.mjs SITE_URL API_TOKEN TEXT   (with NODE_PATH at the SDK's node_modules)

import { createRequire } from "node:module";
import path from "node:path";

// Resolved from NODE_PATH: the scripts install the SDK outside the checkout.
const require = createRequire(path.join(process.env.NODE_PATH, "noop.js"));
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } = require("@a2a-js/sdk/client");
const { Role, taskStateToJSON } = require("@a2a-js/sdk");
const { TaskNotCancelableError, TaskNotFoundError } = require("@a2a-js/sdk/errors");

const [site, token, text] = process.argv.slice(2);

function withToken(input, init = {}) {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${token}`);
  return fetch(input, { ...init, headers });
}

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
  }),
);
const client = await factory.createFromUrl(site);

const shown = (task) => ({
  id: task.id,
  contextId: task.contextId,
  state: taskStateToJSON(task.status.state),
  reply: task.status.message?.parts?.[0]?.content?.value,
  history: task.history?.length ?? 0,
});

const seen = {};
const sent = await client.sendMessage({
  tenant: "",
  message: {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
});
seen.sent = shown(sent);
seen.got = shown(await client.getTask({ tenant: "", id: sent.id, historyLength: 1 }));
const listed = await client.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 10, pageToken: "" });
seen.listed = listed.tasks.map((t) => t.id);
try {
  await client.getTask({ tenant: "", id: "00000000-0000-4000-8000-000000000000" });
  seen.unknown = "answered";
} catch (e) {
  seen.unknown = e instanceof TaskNotFoundError ? "TaskNotFoundError" : `${e.constructor.name}: ${e.message}`;
}
try {
  await client.cancelTask({ tenant: "", id: sent.id });
  seen.cancel = "answered";
} catch (e) {
  seen.cancel = e instanceof TaskNotCancelableError ? "TaskNotCancelableError" : `${e.constructor.name}: ${e.message}`;
}
console.log(JSON.stringify(seen));
