// An ACP client on the newest @agentclientprotocol/sdk (stable v1 entrypoint): the SDK's client
// app validates every message against the stable v1 schema. Drives relavium-lsp acp through
// the stable session surface — config options, slash commands, list/close/resume/load/delete —
// and writes what happened as JSON to the file named by argv[2].
//
//   RELAVIUM_ACP_COMMAND='["python","-m","relavium_lsp","acp"]' node current_client.mjs out.json WORKSPACE
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const [resultPath, workspace] = process.argv.slice(2);
const errors = [];
const updates = [];
const writes = [];
const permissions = [];
const originalError = console.error;
console.error = (...args) => {
  errors.push(args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" "));
  originalError(...args);
};

const [command, ...args] = JSON.parse(process.env.RELAVIUM_ACP_COMMAND);
const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const result = { errors, updates, writes, permissions, stopReasons: [] };
const methods = acp.methods.agent;

const app = acp
  .client({ name: "relavium-e2e" })
  .onNotification(acp.methods.client.session.update, (c) => {
    updates.push(c.params.update);
  })
  .onRequest(acp.methods.client.session.requestPermission, (c) => {
    permissions.push(c.params.toolCall.toolCallId);
    return { outcome: { outcome: "selected", optionId: "allow-once" } };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, (c) => {
    writes.push(c.params.path);
    return {};
  })
  .onRequest(acp.methods.client.fs.readTextFile, () => ({ content: "" }));

try {
  await app.connectWith(stream, async (cx) => {
    result.initialize = await cx.request(methods.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      clientInfo: { name: "relavium-e2e", version: "1.0.0" },
    });
    const session = await cx.request(methods.session.new, { cwd: workspace, mcpServers: [] });
    const sessionId = session.sessionId;
    result.sessionId = sessionId;
    result.newSession = session;
    const prompt = async (value) => {
      const answer = await cx.request(methods.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: value }],
      });
      result.stopReasons.push(answer.stopReason);
    };
    const setOption = (configId, value) =>
      cx.request(methods.session.setConfigOption, { sessionId, configId, value });

    await prompt("Why does add() look wrong?");
    result.modelSet = await setOption("model", "loop/gpt-4.1");
    result.approvalSet = await setOption("approval", "auto_edits");
    await prompt("Fix it please.");
    await prompt("/title Fixing add()");
    await prompt("/model");
    result.listed = await cx.request(methods.session.list, { cwd: workspace });
    await cx.request(methods.session.close, { sessionId });
    result.resumed = await cx.request(methods.session.resume, {
      sessionId,
      cwd: workspace,
      mcpServers: [],
    });
    result.updatesBeforeLoad = updates.length;
    result.loaded = await cx.request(methods.session.load, {
      sessionId,
      cwd: workspace,
      mcpServers: [],
    });
    await cx.request(methods.session.delete, { sessionId });
    result.listedAfterDelete = await cx.request(methods.session.list, { cwd: workspace });
  });
} catch (error) {
  result.failure = String(error?.message ?? JSON.stringify(error));
} finally {
  agent.stdin.end();
  if (agent.exitCode === null && agent.signalCode === null) {
    await new Promise((resolve) => agent.once("exit", resolve));
  }
  writeFileSync(resultPath, JSON.stringify(result, null, 2));
}
