//! `agentgate view`: a run of any dialect shown for a person (issue 59). Golden outputs in
//! tests/view/, one fixture of each dialect, plain and coloured, reviewed by eye.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentgate::Dialect;

fn view(args: &[&str], file: &Path, width: usize) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .arg("view")
        .args(args)
        .arg(file)
        .env("COLUMNS", width.to_string())
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/view").join(name)).unwrap()
}

const READ: [Dialect; 9] = [
    Dialect::Localcode,
    Dialect::Adal,
    Dialect::Wuu,
    Dialect::Loom,
    Dialect::BaseContext,
    Dialect::ClaudeCode,
    Dialect::Codex,
    Dialect::Gemini,
    Dialect::Canonical,
];

#[test]
fn one_fixture_of_each_dialect_is_shown_as_its_golden_plain_and_coloured() {
    for d in READ {
        let file = common::representative(d);
        // Piped, auto is plain.
        let (code, plain, err) = view(&[], &file, 80);
        assert_eq!(code, Some(0), "{d}: {err}");
        assert_eq!(plain, golden(&format!("{d}.txt")), "{d}");
        assert!(!plain.contains('\u{1b}'), "{d}: no colour when piped");
        let (_, colour, _) = view(&["--color", "always"], &file, 80);
        assert_eq!(colour, golden(&format!("{d}.color.txt")), "{d}");
        assert!(colour.contains("\u{1b}[1m"), "{d}");
    }
}

/// What the goldens hold, said by hand from the claude-code fixture: its Glob call and result,
/// its answer, its tokens (input with cache, claude-code.md) and its total_cost_usd rounded.
#[test]
fn the_claude_code_view_says_the_call_the_answer_the_tokens_and_the_cost() {
    let (_, out, _) = view(&[], &common::fixtures().join("claude-code/success.jsonl"), 80);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("claude-code · model claude-sonnet-4-6 · session "), "{out}");
    assert_eq!(lines[1].split_whitespace().take(3).collect::<Vec<_>>(), ["──", "turn", "1"]);
    assert_eq!(lines[2], "  → Glob  src/*.rs");
    assert_eq!(lines[3], "    ✓ Glob (2 lines)");
    assert_eq!(lines[4], "  assistant  Two files: main.rs, lib.rs.");
    assert_eq!(lines[5], "  tokens: 32125 in (31212 cached), 61 out");
    assert_eq!(lines[6], "■ completed · tokens: 32125 in (31212 cached), 61 out · $0.0228");
    assert_eq!(lines.len(), 7);
}

#[test]
fn every_line_fits_the_width_over_every_fixture_and_real_stream() {
    let mut files: Vec<std::path::PathBuf> = common::cases().into_iter().map(|c| c.path).collect();
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real");
    if let Ok(dirs) = std::fs::read_dir(&real) {
        for d in dirs.flatten().filter(|d| d.path().is_dir()) {
            files.extend(
                std::fs::read_dir(d.path())
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl")),
            );
        }
    }
    for width in [40, 60, 80, 120] {
        for file in &files {
            let (_, out, _) = view(&[], file, width);
            for line in out.lines() {
                assert!(line.chars().count() <= width, "{} at {width}: {line:?}", file.display());
            }
            assert!(
                out.lines().last().is_some_and(|l| l.starts_with('■')),
                "{}: ends with its outcome",
                file.display()
            );
        }
    }
}

#[test]
fn text_from_the_input_cannot_move_the_terminals_cursor() {
    let dir = common::temp_dir("view-escape");
    let file = dir.join("run.jsonl");
    std::fs::write(
        &file,
        "{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"Done \\u001b[2J and\\nmore\", \"tokens\": {\"prompt\": 1, \"completion\": 1, \"total\": 2}}\n",
    )
    .unwrap();
    for colour in ["never", "always"] {
        let (_, out, _) = view(&["--color", colour], &file, 80);
        assert!(!out.contains("\u{1b}[2J"), "{out:?}");
        assert!(out.contains("Done \\u001b[2J and"), "{out}");
        // The text's own line break is kept as a line of its own, indented.
        assert!(out.lines().any(|l| l.trim() == "more"), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a terminal (a pseudo-terminal made by script(1)) colour comes; NO_COLOR takes it away.
#[test]
fn colour_on_a_terminal_unless_no_color() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no script(1) to make a terminal");
        return;
    }
    let file = common::fixtures().join("codex/success.jsonl");
    let cmd = format!("{} view {}", env!("CARGO_BIN_EXE_agentgate"), file.display());
    let on_terminal = |no_color: Option<&str>| {
        let mut c = Command::new("script");
        c.args(["-qec", &cmd, "/dev/null"]).env("COLUMNS", "80").stdin(Stdio::null());
        match no_color {
            Some(v) => c.env("NO_COLOR", v),
            None => c.env_remove("NO_COLOR"),
        };
        String::from_utf8(c.output().unwrap().stdout).unwrap()
    };
    let coloured = on_terminal(None);
    assert!(coloured.contains("\u{1b}[1m"), "{coloured:?}");
    let plain = on_terminal(Some("1"));
    assert!(!plain.contains("\u{1b}["), "{plain:?}");
    assert!(plain.contains("completed"), "{plain:?}");
}

#[test]
fn follow_waits_for_the_file_to_grow_and_ends_with_the_run() {
    let dir = common::temp_dir("view-follow");
    let file = dir.join("live.jsonl");
    let text = std::fs::read_to_string(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (first, rest) = lines.split_at(lines.len() / 2);
    std::fs::write(&file, format!("{}\n", first.join("\n"))).unwrap();
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["view", "--follow"])
        .arg(&file)
        .env("COLUMNS", "80")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    f.write_all(format!("{}\n", rest.join("\n")).as_bytes()).unwrap();
    drop(f);
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let out = String::from_utf8(out.stdout).unwrap();
    // The whole run, as without --follow.
    assert_eq!(out, golden("localcode.txt"));
    let _ = std::fs::remove_dir_all(&dir);
}
