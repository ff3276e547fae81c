//! The binary as a user runs it: exit statuses, diagnostics, detection, reports, streaming
//! through a pipe, and a reader that goes away.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentgate"))
}

fn fixture(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Starts agentgate with all three standard streams piped.
fn spawn(args: &[&str]) -> Child {
    bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// The child's stdout lines as they come, read on a thread of their own.
fn output_lines(child: &mut Child) -> (mpsc::Receiver<String>, std::thread::JoinHandle<()>) {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    (rx, reader)
}

fn run_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = spawn(args);
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

fn last_json(stdout: &[u8]) -> serde_json::Value {
    serde_json::from_str(text(stdout).lines().last().expect("some output")).unwrap()
}

#[test]
fn the_readme_example_translates_an_adal_run_into_a_localcode_result() {
    let out = bin()
        .args(["--to", "localcode", &format!("{}/examples/adal-lint-fix.jsonl", env!("CARGO_MANIFEST_DIR"))])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "");
    let result = last_json(&out.stdout);
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "ok");
    assert_eq!(result["exit_code"], 0);
    assert!(result["final_text"].as_str().unwrap().starts_with("Fixed 1 lint error"));
}

#[test]
fn an_unknown_dialect_is_a_usage_error_that_lists_the_valid_names() {
    let out = bin().args(["--to", "klingon"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("klingon") && err.contains("localcode") && err.contains("adal") && err.contains("canonical"),
        "{err}"
    );
    let out = bin().args(["--from", "nope", "--to", "adal"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("auto"));
}

#[test]
fn a_file_that_cannot_be_opened_is_named_and_exits_66() {
    let out = bin().args(["--to", "adal", "/no/such/file.jsonl"]).output().unwrap();
    assert_eq!(out.status.code(), Some(66));
    let err = text(&out.stderr);
    assert!(err.starts_with("agentgate: /no/such/file.jsonl: cannot open"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[test]
#[cfg(target_os = "linux")]
fn an_input_that_cannot_be_read_is_named_on_stderr_and_exits_74_after_the_terminal_record() {
    // A process's own memory file opens, but its first read (at address 0) fails: on the first
    // line, while the dialect is detected and, with --from, while it is translated.
    let mem = "/proc/self/mem";
    for from in [None, Some("adal")] {
        let mut args = vec!["--to", "localcode"];
        if let Some(f) = from {
            args.extend(["--from", f]);
        }
        args.push(mem);
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(74), "{from:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with(&format!("agentgate: {mem}:1: cannot read the input: ")), "{from:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(last_json(&out.stdout)["type"], "result");
    }
}

/// A directory as input is its runs, as summary, validate and detect read one (issue 59): each
/// of its *.jsonl files translated in sorted order, then the file after it.
#[test]
fn a_directory_given_as_input_is_its_files_translated_in_order() {
    let dir = std::env::temp_dir().join(format!("agentgate-cli-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::copy(fixture("adal/failed.jsonl"), dir.join("a.jsonl")).unwrap();
    std::fs::copy(fixture("adal/success.jsonl"), dir.join("b/c.jsonl")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a run").unwrap();
    let file = fixture("adal/success.jsonl");
    let out = bin().args(["--to", "localcode", dir.to_str().unwrap(), &file]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let statuses: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "result")
        .map(|v| v["status"].as_str().unwrap().to_string())
        .collect();
    // a.jsonl (a failed run: localcode's outcome table writes status "incomplete"), b/c.jsonl,
    // then the file after the folder.
    assert_eq!(statuses, ["incomplete", "ok", "ok"], "{}", text(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn detect_names_the_dialect_of_each_fixture_folder() {
    for (file, want) in [
        ("localcode/success.jsonl", "localcode"),
        ("adal/success.jsonl", "adal"),
        ("canonical/long-text.jsonl", "canonical"),
    ] {
        let out = bin().args(["detect", &fixture(file)]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{file}");
        assert_eq!(text(&out.stdout), format!("{want}\n"));
    }
    let out = run_with_stdin(&["detect"], b"{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"x\",\"args\":{}}\n");
    assert_eq!(text(&out.stdout), "adal\n");
}

#[test]
fn an_input_whose_dialect_cannot_be_told_still_has_each_bad_line_named() {
    let out = run_with_stdin(&["--to", "adal"], b"not json\n{\"hello\":1}\n[1,2]\n");
    assert_eq!(out.status.code(), Some(65));
    let stderr = text(&out.stderr);
    let said: Vec<&str> = stderr.lines().collect();
    assert_eq!(said.len(), 3, "{stderr}");
    assert!(said[0].starts_with("agentgate: <stdin>:1: not JSON"), "{stderr}");
    assert!(said[1].starts_with("agentgate: <stdin>:3: JSON array, not an object"), "{stderr}");
    assert!(said[2].contains("cannot tell the input's dialect"), "{stderr}");
    // And the output still ends with the target's terminal record.
    assert_eq!(last_json(&out.stdout)["type"], "complete");
}

#[test]
fn detect_says_why_when_it_cannot_tell() {
    let out = run_with_stdin(&["detect"], b"{\"hello\":1}\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot tell the dialect"), "{}", text(&out.stderr));
    // An error line alone fits both localcode and adal.
    let out = run_with_stdin(&["detect"], b"{\"type\":\"error\",\"message\":\"x\"}\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("localcode, adal"), "{}", text(&out.stderr));
}

#[test]
fn dialects_lists_every_dialect_with_a_description() {
    let out = bin().arg("dialects").output().unwrap();
    let listing = text(&out.stdout);
    for name in ["localcode", "adal", "canonical"] {
        assert!(listing.lines().any(|l| l.starts_with(name) && l.len() > name.len() + 10), "{listing}");
    }
}

#[test]
fn a_bad_line_is_reported_with_file_and_line_and_the_rest_is_still_translated() {
    let input = concat!(
        "{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"bash\",\"args\":{\"command\":\"ls\"}}\n",
        "adal: warning: banner text\n",
        "[1,2]\n",
        "{\"name\":\"no type\"}\n",
        "{\"type\":\"tool_result\",\"id\":\"a\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"x\"}\n",
        "{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n",
    );
    let out = run_with_stdin(&["--to", "localcode"], input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(lines[0].starts_with("agentgate: <stdin>:2: not JSON"), "{err}");
    assert!(lines[1].starts_with("agentgate: <stdin>:3: JSON array, not an object"), "{err}");
    assert!(lines[2].starts_with("agentgate: <stdin>:4: object without a \"type\""), "{err}");
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert_eq!(last_json(&out.stdout)["status"], "ok");
}

#[test]
fn a_diagnostic_quoting_control_characters_from_the_input_stays_one_line_and_escapes_them() {
    // The status quotes an escape sequence that clears a terminal, a line separator and a C1
    // control: the diagnostic that quotes it back must carry none of them raw.
    let input = concat!(
        r#"{"v":1,"type":"tool_result","id":"a","status":"done\u001b[2J\u2028\u0085x"}"#,
        "\n",
        r#"{"v":1,"type":"terminal","outcome":"completed"}"#,
        "\n",
    );
    let out = run_with_stdin(&["--from", "canonical", "--to", "adal"], input.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert_eq!(
        err,
        "agentgate: <stdin>:1: tool_result: unknown variant `done\\u001b[2J\\u2028\\u0085x`, \
         expected one of `completed`, `failed`, `cancelled`\n"
    );
    assert_eq!(last_json(&out.stdout)["type"], "complete");
}

#[test]
fn strict_makes_the_first_bad_line_fatal_after_writing_the_terminal_record() {
    let input = "{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"bash\",\"args\":{}}\nnot json\n{\"type\":\"answer\",\"content\":\"never read\"}\n";
    let out = run_with_stdin(&["--to", "localcode", "--strict"], input.as_bytes());
    assert_eq!(out.status.code(), Some(65));
    let result = last_json(&out.stdout);
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "incomplete");
    assert!(result["reason"].as_str().unwrap().contains("line 2"), "{result}");
    assert_eq!(result["final_text"], "");
}

#[test]
fn a_bom_and_crlf_line_endings_are_accepted_silently_and_a_blank_line_is_named() {
    let input = "\u{feff}{\"type\":\"answer\",\"content\":\"hi\"}\r\n\r\n{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\r\n";
    let out = run_with_stdin(&["--to", "localcode"], input.as_bytes());
    assert_eq!(text(&out.stderr), "agentgate: <stdin>:2: blank line\n");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(last_json(&out.stdout)["final_text"], "hi");
    // Fatal under --strict (65), after the terminal record.
    let out = run_with_stdin(&["--to", "localcode", "--strict"], input.as_bytes());
    assert_eq!(out.status.code(), Some(65));
    assert_eq!(last_json(&out.stdout)["type"], "result");
    assert!(text(&out.stderr).starts_with("agentgate: <stdin>:2: blank line\n"), "{}", text(&out.stderr));
}

#[test]
fn each_file_is_one_run_with_its_own_terminal_record() {
    let out = bin()
        .args(["--to", "localcode", &fixture("adal/success.jsonl"), &fixture("adal/failed.jsonl")])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let results: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "result")
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["exit_code"], 0);
    assert_eq!(results[1]["exit_code"], 1);
}

#[test]
fn report_accounts_for_every_line_and_names_what_was_dropped() {
    let out = bin().args(["--to", "adal", "--report", &fixture("localcode/unknown-events.jsonl")]).output().unwrap();
    let err = text(&out.stderr);
    assert!(
        err.contains("report (localcode to adal): 9 lines: 4 translated, 0 passed through, 5 dropped, 0 bad, 0 blank"),
        "{err}"
    );
    assert!(err.contains("extension ×1"), "{err}");
    assert!(err.contains("tool_result.duration_ms ×1"), "{err}");
    assert!(err.contains("synthesized: complete.model ×1 complete.session_id ×1 tool_call ×1"), "{err}");
}

#[test]
fn the_report_counts_each_dropped_member_however_many_sets_of_members_the_records_carry() {
    // 40 sets of extra members (more than the run holds by set), each met twice, and one
    // member common to all, put out of order in half the lines.
    let mut input = String::new();
    for i in 0..40 {
        input.push_str(&format!("{{\"type\":\"content\",\"chunk\":\"x\",\"chars\":\"1\",\"k{i}\":1,\"common\":2}}\n"));
        input.push_str(&format!("{{\"type\":\"content\",\"common\":2,\"chunk\":\"x\",\"chars\":\"1\",\"k{i}\":1}}\n"));
    }
    let out = run_with_stdin(&["--from", "localcode", "--to", "adal", "--report"], input.as_bytes());
    let err = text(&out.stderr);
    let dropped = err.lines().find(|l| l.contains("dropped fields:")).unwrap_or_else(|| panic!("{err}"));
    let words: Vec<&str> = dropped.split_whitespace().skip(2).collect();
    let mut counts: Vec<String> = words.chunks(2).map(|c| c.join(" ")).collect();
    counts.sort();
    let mut expected: Vec<String> = (0..40).map(|i| format!("text_delta.k{i} ×2")).collect();
    expected.push("text_delta.common ×80".into());
    expected.sort();
    assert_eq!(counts, expected, "{err}");
}

#[test]
fn a_live_stream_sees_each_translated_line_before_the_input_ends() {
    let mut child = spawn(&["--to", "localcode"]);
    let mut stdin = child.stdin.take().unwrap();
    let (rx, reader) = output_lines(&mut child);
    let lines = [
        "{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"bash\",\"args\":{\"command\":\"make\"}}",
        "{\"type\":\"tool_result\",\"id\":\"a\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"ok\"}",
        "{\"type\":\"error\",\"message\":\"then it broke\"}",
    ];
    for (i, line) in lines.iter().enumerate() {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        // The input stays open: the translation of this line must arrive anyway.
        let got = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no output for input line {} while the input was open", i + 1));
        let v: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert_eq!(v["type"], ["tool_start", "tool_result", "error"][i]);
    }
    drop(stdin);
    let last = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(last.contains("\"type\": \"result\""), "{last}");
    assert_eq!(child.wait().unwrap().code(), Some(0));
    reader.join().unwrap();
}

#[test]
fn a_line_whose_next_line_is_only_half_written_is_not_held_back() {
    // An agent that writes a line and the start of the next in one write (or a long line in
    // pieces) and then works a while: the whole line's translation must not wait for the rest.
    let mut child = spawn(&["--from", "adal", "--to", "localcode"]);
    let mut stdin = child.stdin.take().unwrap();
    let (rx, reader) = output_lines(&mut child);
    let second =
        "{\"type\":\"tool_result\",\"id\":\"a\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"ok\"}\n";
    let (head, rest) = second.split_at(30);
    write!(stdin, "{{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"bash\",\"args\":{{}}}}\n{head}").unwrap();
    stdin.flush().unwrap();
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("the first line held back until the second ends");
    assert!(got.contains("\"type\": \"tool_start\""), "{got}");
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "output for a half-written line");
    write!(stdin, "{rest}").unwrap();
    stdin.flush().unwrap();
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("the second line once written whole");
    assert!(got.contains("\"type\": \"tool_result\""), "{got}");
    drop(stdin);
    let last = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(last.contains("\"type\": \"result\""), "{last}");
    assert_eq!(child.wait().unwrap().code(), Some(0));
    reader.join().unwrap();
}

#[test]
fn a_reader_that_goes_away_ends_agentgate_quietly() {
    let mut input = String::new();
    for i in 0..50_000 {
        input.push_str(&format!(
            "{{\"type\":\"tool_call\",\"id\":\"c{i}\",\"name\":\"bash\",\"args\":{{\"command\":\"echo {i}\"}}}}\n"
        ));
    }
    let mut child = spawn(&["--to", "localcode"]);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout); // like `| head -1`
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    writer.join().unwrap();
    assert_eq!(err, "", "stderr after a broken pipe");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_stream_that_ends_early_gets_one_incomplete_result_with_the_totals_so_far() {
    let out = bin().args(["--to", "localcode", &fixture("localcode/truncated.jsonl")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.matches("\"type\": \"result\"").count(), 1);
    let result = last_json(&out.stdout);
    assert_eq!(result["status"], "incomplete");
    assert_eq!(result["reason"], "input ended without a terminal record");
    assert_eq!(result["tokens"], serde_json::json!({"prompt": 600, "completion": 30, "total": 630}));
    assert!(text(&out.stderr).contains("truncated.jsonl:8: not JSON"));
}

#[test]
fn an_unknown_format_version_exits_65_naming_the_version() {
    let out = run_with_stdin(
        &["--to", "localcode"],
        b"{\"v\":2,\"type\":\"stage\",\"name\":\"x\"}\n{\"v\":2,\"type\":\"stage\",\"name\":\"y\"}\n",
    );
    assert_eq!(out.status.code(), Some(65));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("agentgate: <stdin>:1: canonical format version 2;"), "{err}");
    let result = last_json(&out.stdout);
    assert_eq!(result["status"], "incomplete");
    assert!(result["reason"].as_str().unwrap().contains("version 2"));
}

#[test]
fn validate_accepts_a_valid_stream_and_names_each_problem_of_an_invalid_one() {
    let ok = bin().args(["validate", &fixture("localcode/expected/success.localcode.jsonl")]).output().unwrap();
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(text(&ok.stdout), "");

    let input = concat!(
        "{\"type\":\"tool_result\",\"id\":\"x\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"\"}\n",
        "\n",
        "{\"type\":\"complete\",\"exit_code\":\"0\",\"session_id\":\"s\",\"model\":null}\n",
    );
    let bad = run_with_stdin(&["validate", "--dialect", "adal"], input.as_bytes());
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        text(&bad.stdout),
        "<stdin>:1: tool_result.id \"x\" names no earlier tool_call\n<stdin>:2: blank line (in JSON Lines every line is one JSON value)\n<stdin>:3: complete.exit_code: expected an integer, got \"0\"\n<stdin>:3: complete.model: null where a value is required\n"
    );

    let cut = bin().args(["validate", &fixture("localcode/truncated.jsonl")]).output().unwrap();
    assert_eq!(cut.status.code(), Some(1));
    let report = text(&cut.stdout);
    assert!(report.contains("truncated.jsonl:8: not JSON"), "{report}");
    assert!(report.ends_with("truncated.jsonl: no terminal \"result\" record\n"), "{report}");
}

#[test]
fn a_line_that_does_not_parse_is_named_once_by_line_and_column() {
    // The diagnostic names the input's line; the parser's own "at line 1 column N" would name
    // a second line number, always 1.
    let out = run_with_stdin(&["--from", "localcode", "--to", "adal"], b"{\"type\": \"x\", bad}\n");
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.lines().next(),
        Some("agentgate: <stdin>:1: not JSON at column 15: key must be a string"),
        "{stderr}"
    );
}

#[test]
fn a_mistyped_command_is_named_with_the_one_meant() {
    let out = run_with_stdin(&["sumary", "runs/"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "agentgate: unknown command 'sumary'; did you mean 'summary'? (see agentgate --help)\n"
    );
    assert!(out.stdout.is_empty());
    // A word that is nearly no command's name is a file, as before.
    let out = run_with_stdin(&["--to", "adal", "no-such-run.jsonl"], b"");
    assert_eq!(out.status.code(), Some(66), "{}", text(&out.stderr));
}

#[test]
fn from_and_to_have_short_flags() {
    let input = std::fs::read(fixture("localcode/success.jsonl")).unwrap();
    let long = run_with_stdin(&["--from", "localcode", "--to", "wuu"], &input);
    let short = run_with_stdin(&["-f", "localcode", "-t", "wuu"], &input);
    assert_eq!(short.status.code(), Some(0));
    assert_eq!(short.stdout, long.stdout);
}

#[test]
fn a_from_the_first_lines_belie_and_a_flag_the_target_ignores_are_warned_of() {
    // --from localcode on an adal stream: said once, and the stream is read as told.
    let input = std::fs::read(fixture("adal/success.jsonl")).unwrap();
    let out = run_with_stdin(&["--from", "localcode", "--to", "wuu"], &input);
    let stderr = text(&out.stderr);
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("warning: this line is")).collect();
    assert_eq!(warned, ["agentgate: <stdin>:1: warning: this line is an adal record, not localcode; reading the stream as localcode, as --from says"]);
    // The right --from: no word.
    let out = run_with_stdin(&["--from", "adal", "--to", "wuu"], &input);
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    // --json-deltas is base-context's, --include-partial-messages claude-code's.
    let out = run_with_stdin(&["--to", "adal", "--json-deltas", "--include-partial-messages"], &input);
    assert_eq!(
        text(&out.stderr),
        "agentgate: warning: --json-deltas does nothing with --to adal (it is base-context's)\n\
         agentgate: warning: --include-partial-messages does nothing with --to adal (it is claude-code's)\n"
    );
    assert_eq!(out.status.code(), Some(0));
    let out = run_with_stdin(&["--to", "base-context", "--json-deltas"], &input);
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
}

#[test]
fn completions_and_the_manual_page_come_from_the_command_line_definition() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run_with_stdin(&["completions", shell], b"");
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = text(&out.stdout);
        for word in ["summary", "validate", "json-deltas", "include-partial-messages"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    // The bash script is bash.
    let out = run_with_stdin(&["completions", "bash"], b"");
    if let Ok(check) = Command::new("bash").arg("-n").stdin(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        let mut check = check;
        check.stdin.take().unwrap().write_all(&out.stdout).unwrap();
        let done = check.wait_with_output().unwrap();
        assert!(done.status.success(), "{}", text(&done.stderr));
    }
    let man = text(&run_with_stdin(&["man"], b"").stdout);
    assert!(man.contains(".TH agentgate 1"), "{}", &man[..200.min(man.len())]);
    for word in ["summary", "exec", "validate", "detect"] {
        assert!(man.contains(word), "{word}");
    }
}

/// With no FILE and a terminal on standard input, every command that reads a stream says so
/// on stderr rather than waiting silently. The terminal is `script`'s (util-linux): where it is
/// not installed, this cannot be tried and says so.
#[test]
fn reading_a_terminal_every_command_says_how_to_end_the_stream() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("script (util-linux) is not installed: the terminal hint is not tried");
        return;
    }
    for args in ["--to localcode", "detect", "validate", "summary"] {
        let line = format!("{} {args}", env!("CARGO_BIN_EXE_agentgate"));
        let out = Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let said = text(&out.stdout);
        assert!(said.contains("reading a stream from the terminal; end it with Ctrl-D"), "{args}: {said}");
    }
}
