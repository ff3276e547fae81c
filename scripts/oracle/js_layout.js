// Writes tests/oracle/js-json-stringify.jsonl: generated values as JSON.stringify writes them,
// the writer of claude-code's and base-context's lines (claude-code is a Node program;
// base-context-notes.md: "All JSON is produced by JSON.stringify").
//
// tests/layouts.rs parses every line and asserts that agentgate's compact layout writes the same
// bytes. The values are what those agents put in a line: strings of every kind of character,
// integers, and floats from 1e-4 up to 1e16 (costs, ratios). Floats outside that range, and -0,
// are written differently by JSON.stringify and serde_json where JSON.stringify writes plain
// what serde_json writes with an exponent (0.0000035 / 3.5e-6, 100000000000000000000 / 1e+20),
// and -0 (0 / -0.0): tests/layouts.rs states those cases by hand instead. Deterministic (a fixed
// seed and its own generator): run it again and the file does not change.
//
//     node scripts/oracle/js_layout.js > tests/oracle/js-json-stringify.jsonl
"use strict";

let seed = 20261206;
// A 32-bit xorshift: the same numbers on every Node.
function next() {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 4294967296;
}
const pick = (list) => list[Math.floor(next() * list.length)];
const below = (n) => Math.floor(next() * n);

const ALPHABET = ["a", "Z", " ", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\u0000", "\u001f", "\u007f",
  "é", "ß", "☃", "\u2028", "\u2029", "<", ">", "&", "🙂", "中", "\u00a0", "\ufeff"];

function someString() {
  let s = "";
  for (let n = below(8); n > 0; n--) s += pick(ALPHABET);
  return s;
}

function someFloat() {
  switch (below(4)) {
    case 0: return Number(((1 + next() * 9) * 10 ** (below(19) - 4)).toPrecision(1 + below(17)));
    case 1: return Math.round(next() * 10 ** (1 + below(7))) / 10 ** (1 + below(4)) + 1e-4;
    case 2: return pick([0.1 + 0.2, 0.018, 2.5, 0.0001, 0.00035, 123.456, 9007199254740.5, 1.5e15]);
    default: return 0.0001 + next();
  }
}

function someValue(depth) {
  switch (below(depth < 3 ? 8 : 5)) {
    case 0: case 4: return someFloat();
    case 1: return below(2) ? below(1000) : Math.floor(next() * Number.MAX_SAFE_INTEGER) * pick([1, -1]);
    case 2: return someString();
    case 3: return pick([true, false, null]);
    case 5: { const a = []; for (let n = below(4); n > 0; n--) a.push(someValue(depth + 1)); return a; }
    default: { const o = {}; for (let n = below(4); n > 0; n--) o[someString() || "k"] = someValue(depth + 1); return o; }
  }
}

for (let n = 0; n < 400; n++) {
  process.stdout.write(JSON.stringify({ type: "notice", text: someString(), n, value: someValue(0), f: someFloat() }) + "\n");
}
