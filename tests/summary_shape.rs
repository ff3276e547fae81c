//! `summary`'s table at the widths terminals have, and the runs it shows: `--columns`,
//! `--where`, `--sort`, `--group-by`, `--totals` in CSV, money rounded in the table (issue 59).

mod common;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn summary(args: &[&str], paths: &[PathBuf], width: usize) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .arg("summary")
        .args(args)
        .args(paths)
        .env("COLUMNS", width.to_string())
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

fn fixture(rel: &str) -> PathBuf {
    common::fixtures().join(rel)
}

/// Every fixture, and the real streams beside the repository where they are.
fn every_run() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = common::cases().into_iter().map(|c| c.path).collect();
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real");
    if let Ok(dirs) = std::fs::read_dir(&real) {
        for d in dirs.flatten().filter(|d| d.path().is_dir()) {
            let mut more: Vec<PathBuf> = std::fs::read_dir(d.path())
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            more.sort();
            files.extend(more);
        }
    }
    files
}

#[test]
fn the_table_fits_60_80_100_and_120_columns_and_keeps_its_core_columns() {
    let files = every_run();
    for width in [60, 80, 100, 120] {
        let (code, table) = summary(&["--format", "table"], &files, width);
        assert_eq!(code, Some(0));
        for line in table.lines() {
            assert!(line.chars().count() <= width, "{width} columns: {line:?} is {} wide", line.chars().count());
        }
        // The file, the outcome, the calls, the tokens and the cost go last, in that order:
        // at 60 the cost too has gone (the outcome alone takes 17: permission_denied).
        let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        let core: &[&str] = if width == 60 {
            &["file", "outcome", "calls", "input", "output"]
        } else {
            &["file", "outcome", "calls", "input", "output", "cost_usd"]
        };
        for c in core {
            assert!(header.contains(c), "{width} columns: {header:?}");
        }
        assert_eq!(header[0], "file");
        // A column is shown only where every column before it in the priority is.
        let priority = ["file", "outcome", "calls", "input", "output", "cost_usd", "dialect", "final_text", "failed"];
        let (_, all) = summary(&["--format", "table"], &files, 1000);
        let present: Vec<&str> = all.lines().next().unwrap().split_whitespace().collect();
        let ranked: Vec<&&str> = priority.iter().filter(|p| present.contains(p)).collect();
        if let Some(last) = ranked.iter().rposition(|p| header.contains(p)) {
            for p in &ranked[..last] {
                assert!(header.contains(p), "{width} columns: {p} left out before a column after it: {header:?}");
            }
        }
    }
    // At 120 there is room for more than the core.
    let (_, wide) = summary(&["--format", "table"], &files, 120);
    assert!(wide.lines().next().unwrap().split_whitespace().count() > 6, "{wide}");
}

#[test]
fn money_is_rounded_in_the_table_and_kept_whole_in_csv_and_json() {
    let dir = common::temp_dir("money");
    let text = std::fs::read_to_string(fixture("claude-code/success.jsonl")).unwrap();
    assert!(text.contains("\"total_cost_usd\":0.022831"));
    let text = text.replace("\"total_cost_usd\":0.022831", "\"total_cost_usd\":0.07231560000000001");
    let path = dir.join("run.jsonl");
    std::fs::write(&path, text).unwrap();
    let (_, table) = summary(&["--format", "table", "--columns", "cost_usd"], std::slice::from_ref(&path), 120);
    let row = table.lines().nth(1).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(cells[0].ends_with("run.jsonl") && cells.len() == 2, "{table}");
    assert_eq!(cells[1], "0.0723", "{table}");
    let (_, csv) = summary(&["--format", "csv", "--columns", "cost_usd"], std::slice::from_ref(&path), 120);
    assert!(csv.lines().nth(1).unwrap().ends_with(",0.07231560000000001"), "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn columns_chooses_the_columns_after_the_file_in_order() {
    let files = [fixture("codex/success.jsonl"), fixture("wuu/success.jsonl")];
    let (code, table) = summary(&["--format", "table", "--columns", "output,outcome,dialect"], &files, 120);
    assert_eq!(code, Some(0));
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["file", "output", "outcome", "dialect"]);
    let (_, csv) = summary(&["--format", "csv", "--columns", "outcome,dialect"], &files, 120);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "file,outcome,dialect");
    assert!(lines[1].ends_with(",completed,codex"), "{csv}");
    assert!(lines[2].ends_with(",completed,wuu"), "{csv}");
    // A name no column has is a usage error that lists the names.
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["summary", "--columns", "outcom"])
        .arg(&files[0])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no column is called \"outcom\""));
}

/// The outcome the fixture's hand-written facts give.
fn outcome_of(rel: &str) -> String {
    let facts = fixture(rel).with_extension("facts.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(facts).unwrap()).unwrap();
    v["outcome"].as_str().unwrap().to_string()
}

#[test]
fn where_keeps_the_runs_that_meet_every_condition() {
    let rels = [
        "claude-code/success.jsonl",
        "claude-code/cut.jsonl",
        "claude-code/api-error.jsonl",
        "codex/turn-failed.jsonl",
        "codex/success.jsonl",
    ];
    let files: Vec<PathBuf> = rels.iter().map(|r| fixture(r)).collect();
    let (code, out) = summary(&["--format", "jsonl", "--where", "outcome!=completed"], &files, 120);
    assert_eq!(code, Some(0));
    let got: Vec<String> =
        common::values(&out).iter().map(|v| v["file"].as_str().unwrap().rsplit('/').take(2).collect()).collect();
    let want: Vec<String> = rels
        .iter()
        .filter(|r| outcome_of(r) != "completed")
        .map(|r| r.rsplit('/').take(2).collect::<String>())
        .collect();
    assert!(!want.is_empty() && want.len() < rels.len());
    assert_eq!(got, want);
    // Two conditions: both hold.
    let (_, out) =
        summary(&["--format", "jsonl", "--where", "outcome!=completed", "--where", "dialect=codex"], &files, 120);
    let v = common::values(&out);
    assert_eq!(v.len(), 1, "{out}");
    assert_eq!(v[0]["dialect"], "codex");
    // A number compared as a number: only the run whose cost is above a cent.
    let (_, out) = summary(&["--format", "jsonl", "--where", "cost_usd>0.01"], &files, 120);
    let v = common::values(&out);
    assert_eq!(v.len(), 1, "{out}");
    assert!(v[0]["file"].as_str().unwrap().ends_with("claude-code/success.jsonl"));
}

#[test]
fn sort_orders_the_runs_by_a_figure_and_reverse_turns_it() {
    // total_cost_usd written by hand in each fixture: max-turns 0.001, partial-messages 0.0071,
    // success 0.022831; a cut run has no cost and comes last either way.
    let files = [
        fixture("claude-code/success.jsonl"),
        fixture("claude-code/cut.jsonl"),
        fixture("claude-code/max-turns.jsonl"),
        fixture("claude-code/partial-messages.jsonl"),
    ];
    let names = |out: &str| -> Vec<String> {
        common::values(out)
            .iter()
            .map(|v| v["file"].as_str().unwrap().rsplit('/').next().unwrap().to_string())
            .collect()
    };
    let (_, out) = summary(&["--format", "jsonl", "--sort", "cost_usd"], &files, 120);
    assert_eq!(names(&out), ["max-turns.jsonl", "partial-messages.jsonl", "success.jsonl", "cut.jsonl"]);
    let (_, out) = summary(&["--format", "jsonl", "--sort", "cost_usd", "-r"], &files, 120);
    assert_eq!(names(&out), ["success.jsonl", "partial-messages.jsonl", "max-turns.jsonl", "cut.jsonl"]);
}

#[test]
fn group_by_sums_the_runs_of_each_group() {
    let files = [fixture("codex/success.jsonl"), fixture("codex/cut.jsonl"), fixture("wuu/success.jsonl")];
    let (_, out) = summary(&["--format", "jsonl", "--group-by", "dialect"], &files, 120);
    let v = common::values(&out);
    let mut got: Vec<(String, u64)> =
        v.iter().map(|g| (g["dialect"].as_str().unwrap().to_string(), g["runs"].as_u64().unwrap())).collect();
    got.sort();
    assert_eq!(got, [("codex".to_string(), 2), ("wuu".to_string(), 1)]);
    let (_, table) = summary(&["--format", "table", "--group-by", "dialect"], &files, 120);
    assert!(table.lines().next().unwrap().starts_with("dialect"), "{table}");
    assert!(table.lines().any(|l| l.starts_with("codex")) && table.lines().any(|l| l.starts_with("wuu")), "{table}");
}

#[test]
fn totals_add_a_row_to_the_csv() {
    let files = [fixture("codex/success.jsonl"), fixture("wuu/success.jsonl"), fixture("adal/success.jsonl")];
    let (_, csv) = summary(&["--format", "csv", "--totals"], &files, 120);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "a header, three runs, the totals: {csv}");
    assert!(lines[4].starts_with("total (3 runs),"), "{csv}");
    let (_, plain) = summary(&["--format", "csv"], &files, 120);
    assert_eq!(plain.lines().count(), 4, "{plain}");
}

#[test]
fn an_empty_input_is_no_run_of_any_dialect() {
    let dir = common::temp_dir("empty");
    let path = dir.join("died.jsonl");
    std::fs::write(&path, "").unwrap();
    let (_, out) = summary(&["--format", "jsonl"], &[path], 120);
    let v = common::values(&out);
    assert_eq!(v[0]["dialect"], Value::Null, "{out}");
    assert_eq!(v[0]["problems"][0], "no dialect: the input holds no lines", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README's example table is what the tool prints for those runs (the fixtures under the
/// names it shows), at the width it says.
#[test]
fn the_readme_example_table_is_what_summary_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("$ COLUMNS=100 agentgate summary --format table runs/\n").unwrap();
    let block = &readme[start..];
    let block = &block[block.find('\n').unwrap() + 1..];
    let shown: String =
        block.lines().take_while(|l| !l.starts_with('$') && !l.starts_with("```")).map(|l| format!("{l}\n")).collect();
    let dir = common::temp_dir("readme");
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    for (name, rel) in [
        ("bc-success.jsonl", "base-context/success.jsonl"),
        ("cc-success.jsonl", "claude-code/success.jsonl"),
        ("codex-cut.jsonl", "codex/cut.jsonl"),
        ("lc-timeout.jsonl", "localcode/timeout.jsonl"),
        ("loom-session.jsonl", "loom/session.jsonl"),
    ] {
        std::fs::copy(fixture(rel), runs.join(name)).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .current_dir(&dir)
        .args(["summary", "--format", "table", "runs/"])
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), shown);
    let _ = std::fs::remove_dir_all(&dir);
}
