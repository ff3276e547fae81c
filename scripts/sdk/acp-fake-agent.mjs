// A fake ACP agent built on the official TypeScript SDK (@agentclientprotocol/sdk), for
// `agentgate exec --as D --from acp -- node acp-fake-agent.mjs SCENARIO`: it answers as a real
// agent would, with the facts a scenario scripts (FACTS below, which the SDK checks of the
// Claude and Codex streams hold agentgate's output to).
//
// Scenarios: good (thinking, a plan, a tool call that completes, text, usage), deny (it asks for
// a permission; a refusal fails the call and the turn goes on), allow (the same, allowed),
// ask-never (the same, cancelled), crash (exits 3 before answering), noise (a log line on stdout
// first), hang (never answers, deaf to session/cancel), cancel-ignored (answers end_turn a while
// after a cancel, as copilot-cli#4561 does).

import * as acp from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";

export const FACTS = {
  good: { outcome: "completed", text: "Two files: main.rs, lib.rs.", calls: 1, input: 1200, output: 80 },
  deny: { outcome: "completed", text: "I could not run it.", calls: 1, input: 900, output: 30 },
  noise: { outcome: "completed", text: "Two files: main.rs, lib.rs.", calls: 1, input: 1200, output: 80 },
  allow: { outcome: "completed", text: "Removed.", calls: 1, input: 900, output: 30, permission: "allow" },
  "ask-never": { outcome: "permission_denied", permission: "ask-never" },
  crash: { outcome: "failed" },
  hang: { outcome: "timeout", timeout: "1s" },
  "cancel-ignored": { outcome: "timeout", timeout: "500ms" },
};

const scenario = process.argv[2] ?? "good";
if (import.meta.url === `file://${process.argv[1]}`) {
  if (scenario === "noise") process.stdout.write("Loaded cached credentials.\n");
  const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
  let cancelled = false;
  const app = acp
    .agent({ name: "fake-acp-agent" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      authMethods: [],
      agentInfo: { name: "fake-acp-agent", version: "1.0.0" },
    }))
    .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "fake-session-1" }))
    .onNotification(acp.methods.agent.session.cancel, () => {
      cancelled = true;
    })
    .onRequest(acp.methods.agent.session.prompt, async (ctx) => {
      const sessionId = ctx.params.sessionId;
      const update = (u) => ctx.client.notify(acp.methods.client.session.update, { sessionId, update: u });
      if (scenario === "crash") {
        await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Starting" } });
        setTimeout(() => process.exit(3), 50);
        return new Promise(() => {});
      }
      if (scenario === "hang") return new Promise(() => {});
      if (scenario === "cancel-ignored") {
        await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Working" } });
        await new Promise((r) => setTimeout(r, 1500));
        return { stopReason: "end_turn" };
      }
      if (scenario === "deny" || scenario === "ask-never" || scenario === "allow") {
        await update({ sessionUpdate: "tool_call", toolCallId: "call-1", title: "Bash: rm -rf build", name: "Bash", kind: "execute", status: "pending", rawInput: { command: "rm -rf build" } });
        const answer = await ctx.client.request(acp.methods.client.session.requestPermission, {
          sessionId,
          toolCall: { toolCallId: "call-1", title: "Bash: rm -rf build" },
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "reject", name: "Reject", kind: "reject_once" },
          ],
        });
        if (answer.outcome.outcome === "cancelled" || cancelled) return { stopReason: "cancelled" };
        if (answer.outcome.optionId === "allow") {
          await update({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "completed", content: [{ type: "content", content: { type: "text", text: "removed" } }] });
          await update({ sessionUpdate: "agent_message_chunk", messageId: "m2", content: { type: "text", text: FACTS.allow.text } });
          return { stopReason: "end_turn", usage: { totalTokens: 930, inputTokens: 900, outputTokens: 30 } };
        }
        await update({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "failed", content: [{ type: "content", content: { type: "text", text: "refused" } }] });
        await update({ sessionUpdate: "agent_message_chunk", messageId: "m2", content: { type: "text", text: FACTS.deny.text } });
        return { stopReason: "end_turn", usage: { totalTokens: 930, inputTokens: 900, outputTokens: 30 } };
      }
      await update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "List the sources." } });
      await update({ sessionUpdate: "plan", entries: [{ content: "list files", priority: "high", status: "in_progress" }] });
      await update({ sessionUpdate: "tool_call", toolCallId: "call-1", title: "Glob: src/*.rs", name: "Glob", kind: "search", status: "in_progress", rawInput: { pattern: "src/*.rs" } });
      await update({ sessionUpdate: "tool_call_update", toolCallId: "call-1", status: "completed", content: [{ type: "content", content: { type: "text", text: "src/main.rs\nsrc/lib.rs" } }] });
      await update({ sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text: "Two files: " } });
      await update({ sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text: "main.rs, lib.rs." } });
      if (scenario === "cancel-ignored") await new Promise((r) => setTimeout(r, 300));
      return { stopReason: "end_turn", usage: { totalTokens: 1280, inputTokens: 1200, outputTokens: 80 } };
    });
  // The client closes stdin after the answer: the agent ends then, as a real one does.
  await app.connectWith(stream, () => new Promise(() => {})).catch(() => process.exit(0));
}
