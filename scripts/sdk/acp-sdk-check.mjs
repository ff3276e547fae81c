// The official ACP TypeScript SDK (@agentclientprotocol/sdk) as the client of `agentgate acp`, the
// way an editor drives an agent: initialize, session/new, session/prompt, its session/update
// notifications, session/cancel. For every fixture and every real transcript (replayed by a fake
// agent): the SDK must take every message (each notification reaches its handler, each answer
// its request), every raw line must parse with the SDK's own schemas (stable v1; the answer with
// the unstable one for its usage) with no enum the SDK would silently drop, and the text, tool
// calls, statuses, usage and stop reason the client sees must be the source's, as
// `agentgate summary` reads the run (`exec --as canonical` of the same fake agent, exit status
// included). Then the same with cancels at varied moments: exactly one `cancelled` answer, every
// call final, nothing after it.
//
// Usage: node acp-sdk-check.mjs AGENTGATE FIXTURES_DIR REAL_DIR MAPPINGS_DIR

import { spawn, spawnSync, execFileSync } from "node:child_process";
import { readFileSync, readdirSync, existsSync, statSync } from "node:fs";
import { join, basename } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const [agentgate, fixtures, real, mappings] = process.argv.slice(2);
const sdkDir = join(process.cwd(), "node_modules/@agentclientprotocol/sdk/dist/v1");
const z = await import(pathToFileURL(join(sdkDir, "schema/zod.gen.js")).href);
const zu = await import(pathToFileURL(join(sdkDir, "unstable/schema/zod.gen.js")).href);
const words = JSON.parse(readFileSync(join(mappings, "acp.json"), "utf8")).reason_words;
const read = execFileSync(agentgate, ["dialects"], { encoding: "utf8" })
  .split("\n")
  .map((l) => l.split(/\s+/)[0])
  .filter(Boolean);

let failures = 0;
let checked = 0;
let cancelled = 0;
const fail = (what) => {
  failures += 1;
  console.error(`FAIL ${what}`);
};

// The enums the SDK reads with a default on error (a bad word would vanish, not fail).
function enumProblems(line) {
  const out = [];
  const u = line?.params?.update;
  if (line.method !== undefined) {
    if (line.method !== "session/update") out.push(`method ${line.method}`);
    if (!z.zSessionUpdate.safeParse(u).success) out.push(`update ${JSON.stringify(u)}`);
    if (u.status !== undefined && !z.zToolCallStatus.safeParse(u.status).success) out.push(`status ${u.status}`);
    if (u.kind !== undefined && !z.zToolKind.safeParse(u.kind).success) out.push(`kind ${u.kind}`);
    for (const e of u.entries ?? []) {
      if (!z.zPlanEntryStatus.safeParse(e.status).success || !z.zPlanEntryPriority.safeParse(e.priority).success) {
        out.push(`plan entry ${JSON.stringify(e)}`);
      }
    }
    const n = z.zSessionNotification.safeParse(line.params);
    if (!n.success) out.push(`notification: ${n.error.message}`);
  } else if (line.result?.stopReason !== undefined) {
    const r = zu.zPromptResponse.strict?.().safeParse(line.result) ?? zu.zPromptResponse.safeParse(line.result);
    if (!r.success) out.push(`answer: ${r.error.message}`);
    if (!z.zStopReason.safeParse(line.result.stopReason).success) out.push(`stop reason ${line.result.stopReason}`);
    if (line.result.usage !== undefined && !zu.zUsage.safeParse(line.result.usage).success) out.push("usage");
  } else if (line.error !== undefined) {
    if (!Number.isInteger(line.error.code) || typeof line.error.message !== "string") out.push("error object");
  }
  return out;
}

/** Runs one prompt against `agentgate acp ... -- cmd`, cancelling after `cancelAfter` ms. */
async function drive(flags, cmd, cancelAfter) {
  const proc = spawn(agentgate, ["acp", ...flags, "--", ...cmd], { stdio: ["pipe", "pipe", "ignore"] });
  const toSdk = new PassThrough();
  const raw = [];
  let buffered = "";
  proc.stdout.on("data", (chunk) => {
    toSdk.write(chunk);
    buffered += chunk.toString("utf8");
    let at;
    while ((at = buffered.indexOf("\n")) >= 0) {
      const text = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      raw.push({ line: JSON.parse(text), at: raw.length });
    }
  });
  proc.stdout.on("end", () => toSdk.end());
  const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(toSdk));
  const updates = [];
  const app = acp.client({ name: "agentgate-acp-sdk-check" }).onNotification(acp.methods.client.session.update, (ctx) => {
    updates.push(ctx.params.update);
  });
  let answer;
  let answerError;
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: "agentgate-acp-sdk-check", version: "1" },
    });
    if (!z.zInitializeResponse.safeParse(init).success || init.protocolVersion !== 1) throw new Error("initialize");
    const session = await ctx.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    if (!z.zNewSessionResponse.safeParse(session).success) throw new Error("session/new");
    let timer;
    if (cancelAfter !== undefined) {
      timer = setTimeout(() => ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId }), cancelAfter);
    }
    try {
      answer = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "go" }],
      });
    } catch (e) {
      if (!(e instanceof acp.RequestError)) throw e;
      answerError = e;
    }
    clearTimeout(timer);
    // Nothing more for the session after its answer.
    await new Promise((r) => setTimeout(r, cancelAfter === undefined ? 20 : 150));
  });
  proc.stdin.end();
  await new Promise((r) => proc.on("close", r));
  return { raw: raw.map((r) => r.line), updates, answer, answerError, code: proc.exitCode };
}

/** The calls as the client holds them: id → {name, status, why}. */
function callsOf(updates) {
  const calls = new Map();
  for (const u of updates) {
    if (u.sessionUpdate === "tool_call") {
      calls.set(u.toolCallId, { name: u.name, status: u.status ?? "pending", why: u._meta?.agentgate?.status });
    } else if (u.sessionUpdate === "tool_call_update") {
      const c = calls.get(u.toolCallId);
      if (!c) throw new Error(`update of unknown call ${u.toolCallId}`);
      if (u.status) c.status = u.status;
      if (u.name) c.name = u.name;
      if (u._meta?.agentgate?.status) c.why = u._meta.agentgate.status;
    }
  }
  return calls;
}

function lastMessage(updates) {
  const chunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk");
  if (chunks.length === 0) return "";
  const id = chunks[chunks.length - 1].messageId;
  return chunks
    .filter((u) => u.messageId === id)
    .map((u) => u.content.text)
    .join("");
}

/** The answer the outcome table of mappings/acp.json gives for a run `summary` read. */
function expectedAnswer(run) {
  const word = (w) => Object.keys(words).find((k) => Array.isArray(words[k]) && words[k].includes(w));
  const byReason = run.reason ? word(run.reason) : undefined;
  switch (run.outcome) {
    case "completed":
      return byReason === "max_tokens" ? "max_tokens" : "end_turn";
    case "incomplete":
      return byReason ?? -32603;
    case "timeout":
    case "interrupted":
      return -32800;
    default:
      return -32603;
  }
}

function common(name, r) {
  for (const line of r.raw) {
    for (const p of enumProblems(line)) fail(`${name}: ${p}`);
  }
  const notes = r.raw.filter((l) => l.method === "session/update").length;
  if (notes !== r.updates.length) fail(`${name}: ${notes} notifications on the wire, ${r.updates.length} reached the SDK's handler`);
  const last = r.raw[r.raw.length - 1];
  if (!last || last.method !== undefined) fail(`${name}: the last line is not the prompt's answer`);
  if (r.code !== 0) fail(`${name}: agentgate acp exited ${r.code}`);
  for (const [id, c] of callsOf(r.updates)) {
    if (c.status !== "completed" && c.status !== "failed") fail(`${name}: call ${id} left ${c.status}`);
  }
}

async function check(name, flags, cmd, file, from) {
  // The run as agentgate reads it when it runs the agent (`exec`), not the file alone: where a
  // dialect's outcome needs the exit status (gemini: no `result` and exit 0 is an interrupt, a
  // file without it is incomplete), `agentgate acp` knows the status and so must the expectation.
  const ran = spawnSync(agentgate, ["exec", "--as", "canonical", ...(from ? ["--from", from] : []), "--", ...cmd], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  const summary = execFileSync(agentgate, ["summary", "--full", "--from", "canonical", "-"], {
    input: ran.stdout,
    encoding: "utf8",
  });
  const run = JSON.parse(summary.trim().split("\n")[0]);
  const r = await drive(flags, cmd);
  common(name, r);
  const want = expectedAnswer(run);
  const got = r.answer ? r.answer.stopReason : r.answerError?.code;
  if (got !== want) fail(`${name}: answer ${got}, the outcome table says ${want} (${run.outcome}, ${run.reason})`);
  if (run.outcome === "completed" && lastMessage(r.updates) !== run.final_text) {
    fail(`${name}: last message ${JSON.stringify(lastMessage(r.updates))}, the source's ${JSON.stringify(run.final_text)}`);
  }
  // Calls by name and their failures, as summary counts them; calls left without a result are
  // failed on the client ("no result") and counted as calls only.
  const byName = {};
  for (const c of callsOf(r.updates).values()) {
    if (c.why === "withdrawn") continue;
    const e = (byName[c.name ?? ""] ??= { calls: 0, failed: 0 });
    e.calls += 1;
    if (c.status === "failed" && !["no result", "cancelled", "timeout"].includes(c.why)) e.failed += 1;
  }
  const wantCalls = run.tool_calls.by_name;
  if (JSON.stringify(Object.entries(byName).sort()) !== JSON.stringify(Object.entries(wantCalls).sort())) {
    fail(`${name}: calls ${JSON.stringify(byName)}, the source's ${JSON.stringify(wantCalls)}`);
  }
  const usage = r.answer ? r.answer.usage : r.answerError?.data?.usage;
  const t = run.tokens;
  if (t.input !== undefined && t.output !== undefined) {
    if (usage?.inputTokens !== t.input || usage?.outputTokens !== t.output) {
      fail(`${name}: usage ${JSON.stringify(usage)}, the source's ${JSON.stringify(t)}`);
    }
  } else if (usage && (usage.inputTokens !== undefined || usage.outputTokens !== undefined) && r.answer?.usage) {
    fail(`${name}: usage ${JSON.stringify(usage)} where the source states none`);
  }
  checked += 1;

  // The same run, slowly, cancelled at a moment of its own: one cancelled answer, nothing after.
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).length;
  const pause = 0.02;
  const slow = ["sh", "-c", `while IFS= read -r l; do printf '%s\\n' "$l"; sleep ${pause}; done < "$0"`, file];
  // From the start to past the end of the replay (a late cancel must change nothing).
  const cancelAt = (checked * 37) % Math.max(1, Math.round(lines * pause * 1000 * 1.6));
  const c = await drive(["--cancel-grace", "200ms", "--kill-after", "1s", ...flags], slow, cancelAt);
  common(`${name} (cancel at ${cancelAt} ms)`, c);
  const answers = c.raw.filter((l) => l.method === undefined && l.id === 2);
  if (answers.length !== 1) fail(`${name} (cancel): ${answers.length} answers to the prompt`);
  // A cancel that came after the run ended changes nothing; one before, the answer is cancelled.
  const ended = c.answer?.stopReason ?? c.answerError?.code;
  if (ended === "cancelled") cancelled += 1;
  if (ended !== "cancelled" && ended !== want) fail(`${name} (cancel at ${cancelAt} ms): answer ${ended}`);
}

const cases = [];
for (const d of readdirSync(fixtures).sort()) {
  const dir = join(fixtures, d);
  if (!existsSync(dir) || !read.includes(d)) continue;
  for (const f of readdirSync(dir).sort()) {
    if (f.endsWith(".jsonl")) cases.push({ name: `fixtures/${d}/${f}`, file: join(dir, f), from: d });
  }
}
for (const d of readdirSync(real).sort()) {
  const dir = join(real, d);
  if (!statSync(dir).isDirectory()) continue;
  if (!read.includes(d)) {
    console.log(`acp sdk check: ${d} skipped (agentgate does not read it yet)`);
    continue;
  }
  for (const f of readdirSync(dir).sort()) {
    if (f.endsWith(".jsonl")) cases.push({ name: `real/${d}/${f}`, file: join(dir, f), from: d });
  }
}
for (const c of cases) {
  const rc = c.file.replace(/\.jsonl$/, ".rc");
  const exit = existsSync(rc) ? readFileSync(rc, "utf8").trim() : "0";
  // The fake agent: the recorded stream, then the recorded exit status.
  const agent = ["sh", "-c", `cat "$0"; exit ${Number(exit) || 0}`, c.file];
  try {
    await check(c.name, ["--from", c.from], agent, c.file, c.from);
  } catch (e) {
    fail(`${c.name}: ${e.stack ?? e}`);
  }
}
console.log(`acp sdk check: ${checked} streams served to the SDK's client, ${cancelled} of them cancelled before their end, ${failures} failures`);
// The cancels must land inside runs, not only after them.
if (cancelled * 4 < checked) fail(`only ${cancelled} of ${checked} cancels came before the run's end`);
process.exit(failures === 0 && checked > 0 ? 0 : 1);
