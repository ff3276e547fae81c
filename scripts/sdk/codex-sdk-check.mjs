// The official Codex TypeScript SDK (@openai/codex-sdk) reading agentgate's codex output: its
// client is pointed (codexPathOverride) at a wrapper that runs
// `agentgate exec --as codex -- cat FIXTURE`, for a fixture of every source dialect, and the
// typed result it gives (final response, usage, items, or the error of a failed turn) is held
// to the facts agentgate's canonical translation of the same fixture states.
// With ACP_WRAPPER, the same client also runs an ACP agent built on the official ACP SDK
// (acp-fake-agent.mjs) behind `agentgate exec --as codex --from acp`, once per scenario, held to
// the facts the scenario scripts.
// Usage: node codex-sdk-check.mjs AGENTGATE FIXTURES_DIR WRAPPER [ACP_WRAPPER]
import { Codex } from "@openai/codex-sdk";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const [agentgate, fixtures, wrapper, acpWrapper] = process.argv.slice(2);
let passed = 0, failed = 0;

function facts(file) {
  const out = execFileSync(agentgate, ["--to", "canonical", file], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const lines = out.trim().split("\n").map((l) => JSON.parse(l));
  const t = lines[lines.length - 1];
  // A call, or a result whose call the stream never showed (it gets an item of its own).
  const calls = new Set(lines.filter((l) => l.type === "tool_call" || l.type === "tool_result").map((l) => l.id));
  for (const l of lines.filter((l) => l.type === "session_summary")) for (const c of l.tool_calls ?? []) calls.add(c.id);
  return { outcome: t.outcome, final_text: t.final_text ?? "", usage: t.usage ?? {}, calls: calls.size };
}

for (const dialect of readdirSync(fixtures).sort()) {
  let files;
  try { files = readdirSync(join(fixtures, dialect)).filter((f) => f.endsWith(".jsonl")).sort(); } catch { continue; }
  for (const f of files) {
    const file = join(fixtures, dialect, f);
    const want = facts(file);
    const codex = new Codex({ codexPathOverride: wrapper, env: { ...process.env, AGENTGATE: agentgate, AGENTGATE_FIXTURE: file } });
    const thread = codex.startThread({ skipGitRepoCheck: true });
    const problems = [];
    try {
      const turn = await thread.run("go");
      if (want.outcome !== "completed") problems.push(`a ${want.outcome} run read as a completed turn`);
      if (turn.finalResponse !== want.final_text) problems.push(`finalResponse ${JSON.stringify(turn.finalResponse)}, want ${JSON.stringify(want.final_text)}`);
      const u = turn.usage ?? {};
      if ((u.input_tokens ?? -1) !== (want.usage.input ?? 0)) problems.push(`usage.input_tokens ${u.input_tokens}, want ${want.usage.input ?? 0}`);
      if ((u.output_tokens ?? -1) !== (want.usage.output ?? 0)) problems.push(`usage.output_tokens ${u.output_tokens}, want ${want.usage.output ?? 0}`);
      if ((u.cached_input_tokens ?? -1) !== (want.usage.cache_read ?? 0)) problems.push(`usage.cached_input_tokens ${u.cached_input_tokens}, want ${want.usage.cache_read ?? 0}`);
      const calls = turn.items.filter((i) => ["command_execution", "mcp_tool_call", "file_change", "web_search", "collab_tool_call"].includes(i.type));
      if (calls.length !== want.calls) problems.push(`${calls.length} call items, want ${want.calls}`);
      if (!thread.id) problems.push("no thread id");
    } catch (e) {
      if (want.outcome === "completed") problems.push(`a completed run threw: ${e.message}`);
      else if (!/./.test(e.message)) problems.push("a failed turn without its message");
    }
    if (problems.length) { failed++; console.log(`FAIL ${dialect}/${f}\n  ${problems.join("\n  ")}`); }
    else { passed++; console.log(`ok   ${dialect}/${f}: ${want.outcome}`); }
  }
}
if (acpWrapper) {
  const { FACTS } = await import(new URL("./acp-fake-agent.mjs", import.meta.url).href);
  for (const [scenario, want] of Object.entries(FACTS)) {
    const env = { ...process.env, AGENTGATE: agentgate, AGENTGATE_SCENARIO: scenario, AGENTGATE_PERMISSION: want.permission ?? "deny", AGENTGATE_TIMEOUT: want.timeout ?? "" };
    const thread = new Codex({ codexPathOverride: acpWrapper, env }).startThread({ skipGitRepoCheck: true });
    const problems = [];
    try {
      const turn = await thread.run("go");
      if (want.outcome !== "completed") problems.push(`a ${want.outcome} run read as a completed turn`);
      if (turn.finalResponse !== want.text) problems.push(`finalResponse ${JSON.stringify(turn.finalResponse)}, want ${JSON.stringify(want.text)}`);
      const u = turn.usage ?? {};
      if (u.input_tokens !== want.input || u.output_tokens !== want.output) problems.push(`usage ${JSON.stringify(u)}`);
      const calls = turn.items.filter((i) => ["command_execution", "mcp_tool_call", "file_change", "web_search", "collab_tool_call"].includes(i.type));
      if (calls.length !== want.calls) problems.push(`${calls.length} call items, want ${want.calls}`);
    } catch (e) {
      if (want.outcome === "completed") problems.push(`a completed run threw: ${e.message}`);
      // codex.json's outcome table: a turn.failed message says which outcome it was.
      else if (want.outcome !== "failed" && !e.message.includes(`${want.outcome}:`)) problems.push(`threw ${JSON.stringify(e.message)} for a ${want.outcome} run`);
    }
    if (problems.length) { failed++; console.log(`FAIL acp/${scenario}\n  ${problems.join("\n  ")}`); }
    else { passed++; console.log(`ok   acp/${scenario}: ${want.outcome}`); }
  }
}
console.log(`codex-sdk: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
