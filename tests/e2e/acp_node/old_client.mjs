// An ACP client on @zed-industries/agent-client-protocol 0.4.5, shaped like that release's own
// example client: it initializes with protocolVersion and fs capabilities only, and validates
// every session/update against the eight update kinds its schema knows (any other kind is a
// -32602 "Error handling notification" on console.error). Drives relavium-lsp acp through a
// short session and writes what happened as JSON to the file named by argv[2].
//
//   RELAVIUM_ACP_COMMAND='["python","-m","relavium_lsp","acp"]' node old_client.mjs out.json WORKSPACE [--claim-client-info]
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@zed-industries/agent-client-protocol";

const [resultPath, workspace, ...flags] = process.argv.slice(2);
const claimClientInfo = flags.includes("--claim-client-info");
const errors = [];
const updates = [];
const writes = [];
const permissions = [];
const originalError = console.error;
console.error = (...args) => {
  errors.push(args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" "));
  originalError(...args);
};

class OldClient {
  async requestPermission(params) {
    permissions.push(params.toolCall.toolCallId);
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  }

  async sessionUpdate(params) {
    updates.push(params.update);
  }

  async writeTextFile(params) {
    writes.push(params.path);
    return {};
  }

  async readTextFile(params) {
    return { content: "" };
  }
}

const [command, ...args] = JSON.parse(process.env.RELAVIUM_ACP_COMMAND);
const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const connection = new acp.ClientSideConnection((_agent) => new OldClient(), stream);
const result = { errors, updates, writes, permissions, stopReasons: [] };
const text = (value) => [{ type: "text", text: value }];

try {
  const initialize = {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  };
  if (claimClientInfo) {
    initialize.clientInfo = { name: "claims-to-be-new", version: "9.9.9" };
  }
  result.initialize = await connection.initialize(initialize);
  const session = await connection.newSession({ cwd: workspace, mcpServers: [] });
  result.sessionId = session.sessionId;
  result.modes = session.modes;
  const prompt = async (value) => {
    const answer = await connection.prompt({ sessionId: session.sessionId, prompt: text(value) });
    result.stopReasons.push(answer.stopReason);
  };
  await prompt("Why does add() look wrong?");
  if (!claimClientInfo) {
    await prompt("/usage");
    await connection.setSessionMode({ sessionId: session.sessionId, modeId: "auto_edits" });
    await prompt("Fix it please.");
    result.loaded = await connection.loadSession({
      sessionId: session.sessionId,
      cwd: workspace,
      mcpServers: [],
    });
  }
} catch (error) {
  result.failure = String(error?.message ?? JSON.stringify(error));
} finally {
  agent.stdin.end();
  if (agent.exitCode === null && agent.signalCode === null) {
    await new Promise((resolve) => agent.once("exit", resolve));
  }
  writeFileSync(resultPath, JSON.stringify(result, null, 2));
}
