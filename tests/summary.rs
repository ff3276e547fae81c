//! `agentgate summary`: the same figures translation gives, one line per run of any dialect,
//! totals, and a batch that goes on past files it cannot read.

mod common;

use std::process::Command;

use serde_json::Value;

use agentgate::summary::summarize;
use agentgate::Dialect;

#[test]
fn a_summary_states_the_tokens_and_outcome_the_localcode_result_says() {
    let lc = Dialect::Localcode.contract();
    for case in common::cases() {
        let s = summarize(&case.input[..], &case.name, Some(case.dialect), false);
        let out = common::values(&common::translate(&case.input, case.dialect, Dialect::Localcode));
        let result = out.last().unwrap();
        let ctx = case.path.display();
        assert_eq!(s.tokens.input.unwrap_or(0), result["tokens"]["prompt"].as_u64().unwrap(), "{ctx}: input");
        assert_eq!(s.tokens.output.unwrap_or(0), result["tokens"]["completion"].as_u64().unwrap(), "{ctx}: output");
        assert_eq!(s.tokens.total.unwrap_or(0), result["tokens"]["total"].as_u64().unwrap(), "{ctx}: total");
        let outcome = s.outcome.expect("every run has an outcome");
        // The spec's word for the outcome; localcode to itself keeps the word its result had.
        let status = match case.dialect {
            Dialect::Localcode => String::from_utf8_lossy(&case.input)
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .rfind(|l| l["type"] == "result")
                .map_or(Value::from("incomplete"), |r| r["status"].clone()),
            _ => Value::from(lc.outcome_str(outcome, "status").unwrap()),
        };
        assert_eq!(result["status"], status, "{ctx}: status");
        assert_eq!(result["exit_code"], lc.outcome_code(outcome, "exit_code").unwrap(), "{ctx}: exit code");
        assert_eq!(s.dialect, Some(case.dialect));
    }
}

#[test]
fn a_summary_counts_tools_turns_and_problems() {
    let input = std::fs::read(common::fixtures().join("wuu/success.jsonl")).unwrap();
    let s = summarize(&input[..], "run", None, false);
    assert_eq!(s.dialect, Some(Dialect::Wuu));
    assert_eq!(s.turns, 2);
    let t = &s.tool_calls;
    assert_eq!((t.total, t.failed), (2, 1), "a bash call reported twice counts once");
    assert_eq!(s.tool_calls.by_name["bash"].failed, 1);
    assert_eq!(s.tokens.cache_read, Some(2900));
    assert_eq!(s.tokens_basis, vec!["cumulative"]);
    assert_eq!(s.session_id.as_deref(), Some("thread-9f2c"));
    assert_eq!(s.run_id.as_deref(), Some("run-41"));
    assert_eq!(s.models, vec!["gpt-5.1-codex"]);
    assert!(s.problems.is_empty());

    let cut = std::fs::read(common::fixtures().join("localcode/truncated.jsonl")).unwrap();
    let s = summarize(&cut[..], "cut", None, false);
    assert_eq!(s.problems.len(), 2, "{:?}", s.problems);
    assert!(s.problems[0].starts_with("line 8: not JSON"));
    assert!(s.problems[1].starts_with("no terminal record"));

    let long = std::fs::read(common::fixtures().join("adal/unicode-long.jsonl")).unwrap();
    let short = summarize(&long[..], "long", None, false);
    assert_eq!(short.final_text.chars().count(), agentgate::summary::FINAL_TEXT_CHARS);
    assert!(short.final_text_cut);
    let full = summarize(&long[..], "long", None, true);
    assert!(full.final_text.chars().count() > 3000);
}

#[test]
fn the_cli_summarizes_a_mixed_folder_in_sorted_order_and_goes_on_past_bad_files() {
    let dir = std::env::temp_dir().join(format!("agentgate-summary-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    for (from, to) in
        [("loom/session.jsonl", "b.jsonl"), ("adal/success.jsonl", "nested/a.ndjson"), ("wuu/timeout.jsonl", "c.jsonl")]
    {
        std::fs::copy(common::fixtures().join(from), dir.join(to)).unwrap();
    }
    std::fs::write(dir.join("d.jsonl"), "{\"hello\": \"world\"}\n").unwrap();
    std::fs::write(dir.join("ignored.txt"), "not a transcript").unwrap();
    let bin = env!("CARGO_BIN_EXE_agentgate");
    let out = Command::new(bin).args(["summary", "--totals"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let files: Vec<String> =
        lines[..4].iter().map(|l| l["file"].as_str().unwrap().rsplit('/').next().unwrap().to_string()).collect();
    assert_eq!(files, vec!["b.jsonl", "c.jsonl", "d.jsonl", "a.ndjson"], "sorted by path");
    assert_eq!(lines[0]["dialect"], "loom");
    assert_eq!(lines[1]["outcome"], "timeout");
    assert_eq!(lines[1]["exit_status"], 4, "wuu's own exit status for a timeout");
    assert_eq!(lines[2]["dialect"], Value::Null);
    assert!(lines[2]["problems"][0].as_str().unwrap().contains("cannot tell"));
    assert!(String::from_utf8(out.stderr).unwrap().contains("d.jsonl"));
    let totals = &lines[4]["totals"];
    assert_eq!(totals["runs"], 4);
    assert_eq!(totals["by_dialect"]["adal"], 1);
    assert_eq!(totals["tools"]["bash"]["calls"], 3);
    assert_eq!(totals["tokens"]["input"], 2500 + 300);

    let strict = Command::new(bin).args(["summary", "--strict"]).arg(&dir).output().unwrap();
    assert_eq!(strict.status.code(), Some(65));
    let csv = Command::new(bin).args(["summary", "--format", "csv"]).arg(dir.join("b.jsonl")).output().unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("file,dialect,outcome,exit_status,"));
    assert_eq!(csv.lines().count(), 2);
    let table = Command::new(bin).args(["summary", "--format", "table"]).arg(&dir).output().unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[lines.len() - 2].starts_with("total (4 runs)"), "{table}");
    // The totals count every outcome, not the completed runs alone.
    assert_eq!(lines[lines.len() - 1], "outcomes: 2 completed, 1 incomplete, 1 timeout", "{table}");
    let one = Command::new(bin).args(["summary", "--format", "table"]).arg(dir.join("b.jsonl")).output().unwrap();
    let one = String::from_utf8(one.stdout).unwrap();
    assert!(one.lines().last().unwrap().starts_with("total (1 run) "), "{one}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_path_the_cli_summarizes_the_run_on_standard_input() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["summary", "--format", "jsonl"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = std::fs::read(common::fixtures().join("wuu/timeout.jsonl")).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["file"], "<stdin>");
    assert_eq!(lines[0]["dialect"], "wuu");
    assert_eq!(lines[0]["outcome"], "timeout");
}

/// Every integer in every line of every fixture written as a string of digits, and every string
/// of digits written as an integer, one at a time: the run's figures do not change (DESIGN.md:
/// a decoder accepts a count written either way). Found the loom, canonical and base-context
/// decoders reading such a count as nothing, or refusing its whole line.
#[test]
fn a_count_written_the_other_way_changes_no_figure_of_any_fixture() {
    fn numbers(v: &Value, at: &mut Vec<String>, found: &mut Vec<Vec<String>>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                at.push(k.clone());
                numbers(x, at, found);
                at.pop();
            }),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
                at.push(i.to_string());
                numbers(x, at, found);
                at.pop();
            }),
            Value::Number(n) if n.is_u64() => found.push(at.clone()),
            Value::String(s) if !s.is_empty() && s.len() < 16 && s.bytes().all(|b| b.is_ascii_digit()) => {
                found.push(at.clone())
            }
            _ => {}
        }
    }
    let figures = |input: &[u8], dialect: Dialect| {
        let mut s = summarize(input, "run", Some(dialect), true);
        s.problems.clear();
        s
    };
    let mut tried = 0;
    for case in common::cases() {
        let text = String::from_utf8(case.input.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let expected = figures(&case.input, case.dialect);
        for (i, line) in lines.iter().enumerate() {
            let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
            let mut found = Vec::new();
            numbers(&value, &mut Vec::new(), &mut found);
            // Format versions are not counts: a version written otherwise is refused.
            found.retain(|p| !matches!(p.as_slice(), [k] if ["v", "schema_version", "version"].contains(&k.as_str())));
            for path in found {
                let mut changed = value.clone();
                let slot = path.iter().fold(&mut changed, |v, k| match v {
                    Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
                    v => &mut v[k.as_str()],
                });
                *slot = match slot {
                    Value::Number(n) => Value::String(n.to_string()),
                    Value::String(s) => Value::from(s.parse::<u64>().unwrap()),
                    _ => unreachable!("only numbers and digit strings are found"),
                };
                let mut input = lines.clone();
                let line = changed.to_string();
                input[i] = &line;
                let got = figures(input.join("\n").as_bytes(), case.dialect);
                assert_eq!(got, expected, "{}:{}: {} written the other way", case.name, i + 1, path.join("."));
                tried += 1;
            }
        }
    }
    assert!(tried > 1000, "{tried}");
}

/// DESIGN.md: decoders accept any valid JSON layout. Every fixture with its lines laid out
/// otherwise (members in reverse order at every depth, Python's spaced separators, whitespace
/// around the line, every non-ASCII character and `/` escaped) gives the same figures.
#[test]
fn a_fixture_laid_out_otherwise_gives_the_same_figures() {
    fn reversed(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(m.iter().rev().map(|(k, x)| (k.clone(), reversed(x))).collect()),
            Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
            v => v.clone(),
        }
    }
    /// Spaced separators, and `\u` escapes for every non-ASCII character and `/`.
    fn spaced(v: &Value, out: &mut String) {
        let string = |s: &str, out: &mut String| {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '/' => out.push_str("\\/"),
                    c if (c as u32) < 0x20 || !c.is_ascii() => {
                        let mut units = [0u16; 2];
                        c.encode_utf16(&mut units).iter().for_each(|u| out.push_str(&format!("\\u{u:04X}")));
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        };
        match v {
            Value::Object(m) => {
                out.push('{');
                for (n, (k, x)) in m.iter().enumerate() {
                    out.push_str(if n == 0 { "" } else { ", " });
                    string(k, out);
                    out.push_str(" : ");
                    spaced(x, out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (n, x) in a.iter().enumerate() {
                    out.push_str(if n == 0 { "" } else { " , " });
                    spaced(x, out);
                }
                out.push(']');
            }
            Value::String(s) => string(s, out),
            v => out.push_str(&v.to_string()),
        }
    }
    let figures = |input: &[u8], dialect: Dialect| summarize(input, "run", Some(dialect), true);
    for case in common::cases() {
        let text = String::from_utf8(case.input.clone()).unwrap();
        let expected = figures(&case.input, case.dialect);
        let relaid: String = text
            .lines()
            .map(|line| match serde_json::from_str::<Value>(line) {
                Ok(v) => {
                    let mut out = String::from(" \t");
                    spaced(&reversed(&v), &mut out);
                    out + " \r\n"
                }
                // Bad lines stay as they are: the same diagnostics either way.
                Err(_) => format!("{line}\n"),
            })
            .collect();
        assert_ne!(relaid.as_bytes(), &case.input[..]);
        assert_eq!(figures(relaid.as_bytes(), case.dialect), expected, "{}", case.name);
    }
}

/// wuu.md: `tool_removed withdraws an item by item_id`: a withdrawn call is no call of the
/// run's, in the summary's counts as in every target.
#[test]
fn a_withdrawn_wuu_call_is_not_counted() {
    let input = std::fs::read(common::fixtures().join("wuu/tool-removed.jsonl")).unwrap();
    let s = agentgate::summary::summarize(&input[..], "run", Some(agentgate::Dialect::Wuu), false);
    assert_eq!((s.tool_calls.total, s.tool_calls.failed), (1, 0));
    assert_eq!(s.tool_calls.by_name["grep"].calls, 1);
}

/// Runs `summary --format table` with the terminal width given by `COLUMNS`.
fn table_at(width: usize, paths: &[std::path::PathBuf]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["summary", "--format", "table"])
        .args(paths)
        .env("COLUMNS", width.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap()
}

/// A folder of runs whose table is wider than any terminal: long file names, a long final
/// text holding an escape sequence (ESC [ 2 J clears a terminal) and a newline.
fn wide_runs(tag: &str) -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let dir = std::env::temp_dir().join(format!("agentgate-summary-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let deep = dir.join("a-rather-long-folder-name-for-the-fleet/and-another-one-below-it");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::copy(common::fixtures().join("wuu/success.jsonl"), deep.join("wuu-success-run.jsonl")).unwrap();
    let answer = r"Done: \u001b[2J the screen is safe.\nSecond line of a very long final answer that goes on and on";
    let localcode = format!(
        "{{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"{answer}\", \"tokens\": {{\"prompt\": 12, \"completion\": 3, \"total\": 15}}}}\n"
    );
    std::fs::write(deep.join("localcode-with-an-escape.jsonl"), localcode).unwrap();
    let files = vec![deep.join("localcode-with-an-escape.jsonl"), deep.join("wuu-success-run.jsonl")];
    (dir, files)
}

#[test]
fn the_summary_table_fits_80_and_120_columns() {
    let (dir, files) = wide_runs("width");
    for width in [80, 120] {
        let table = table_at(width, &files);
        for line in table.lines() {
            assert!(line.chars().count() <= width, "{width} columns: {line:?} is {} wide", line.chars().count());
        }
        let header = table.lines().next().unwrap();
        assert!(header.starts_with("file"), "{header}");
        assert!(header.contains("outcome") && header.contains("input") && header.contains("output"), "{header}");
        // A column empty in every row (cost: neither source states one) is left out.
        assert!(!header.contains("cost_usd"), "{header}");
        // The file names give up their folders, not their names.
        let name = if width == 120 { "wuu-success-run.jsonl" } else { "run.jsonl" };
        assert!(table.contains(name), "{table}");
        assert!(table.lines().nth(1).unwrap().starts_with('…'), "{table}");
        assert!(table.lines().any(|l| l.starts_with("total (2 runs)")), "{table}");
    }
    // The final text gets what the other columns leave: at 120 some of it; at 80 the columns
    // before it in the priority (file, outcome, calls, tokens, cost, dialect) leave it less than
    // the 24 characters it wants, and it goes (issue 59: drop by priority, then narrow).
    let text_at = |w| {
        let t = table_at(w, &files);
        let row = t.lines().find(|l| l.contains("localcode")).unwrap().to_string();
        row.find("Done").map_or(0, |at| row[at..].chars().count())
    };
    assert!(text_at(120) >= 24, "{}", table_at(120, &files));
    assert_eq!(text_at(80), 0, "{}", table_at(80, &files));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn control_characters_from_the_input_are_escaped_in_table_and_csv() {
    let (dir, files) = wide_runs("escape");
    let table = table_at(400, &files);
    assert!(!table.contains('\u{1b}'), "the table writes no raw ESC: {table:?}");
    assert!(table.contains("Done: \\u001b[2J the screen is safe.\\nSecond line"), "{table}");
    assert_eq!(table.lines().filter(|l| l.contains("Second line")).count(), 1, "one row, not split by the newline");
    let csv = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["summary", "--format", "csv"])
        .args(&files)
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(!csv.contains('\u{1b}'), "the CSV writes no raw ESC: {csv:?}");
    assert_eq!(csv.lines().count(), 3, "a header and one line a run: {csv}");
    assert!(csv.contains("\\u001b[2J"), "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}
