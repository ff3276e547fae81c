//! What a new user expects of a command-line tool (issue 59): a man page per subcommand,
//! `--from` on every command, `exec --timeout 0`, the `--` tip, one hint for pretty-printed JSON,
//! help that does not send an installed user to a source tree.

mod common;

use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentgate"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).stdin(Stdio::null()).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SUBCOMMANDS: [&str; 10] =
    ["detect", "dialects", "exec", "acp", "completions", "man", "summary", "validate", "export", "view"];

#[test]
fn every_subcommand_has_its_man_page_with_every_option() {
    let main = run(&["man"]);
    assert_eq!(main.status.code(), Some(0));
    assert!(text(&main.stdout).contains("agentgate\\-exec(1)"), "the main page names the subcommands' pages");
    for name in SUBCOMMANDS {
        let out = run(&["man", name]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let page = text(&out.stdout);
        assert!(page.starts_with(".ie") || page.contains(".TH"), "{name}: {page}");
        assert!(page.contains(&format!(".TH agentgate-{name} ")), "{name}: {}", &page[..page.len().min(300)]);
    }
    // Every option of exec, as its --help lists it, is on its page (roff writes - as \-).
    let page = text(&run(&["man", "exec"]).stdout);
    for option in ["--as", "--from", "--timeout", "--kill-after", "--json-deltas", "--otlp-endpoint", "--prompt"] {
        assert!(page.contains(&option.replace('-', "\\-")), "exec's page lacks {option}");
    }
    let page = text(&run(&["man", "summary"]).stdout);
    for option in ["--where", "--sort", "--group-by", "--columns", "--totals"] {
        assert!(page.contains(&option.replace('-', "\\-")), "summary's page lacks {option}");
    }
    let wrong = run(&["man", "exce"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("no command is called 'exce'"));
}

#[test]
fn help_and_the_contracts_page_do_not_send_an_installed_user_to_the_source_tree() {
    let mut pages = vec![text(&run(&["--help"]).stdout), text(&run(&["dialects", "--markdown"]).stdout)];
    for name in SUBCOMMANDS {
        pages.push(text(&run(&[name, "--help"]).stdout));
    }
    for page in pages {
        assert!(!page.contains("mappings/"), "{page}");
        assert!(!page.contains("tests/docs.rs"), "{page}");
    }
}

#[test]
fn validate_takes_from_as_every_command_does_and_dialect_still() {
    let file = common::fixtures().join("codex/cut.jsonl");
    let file = file.to_str().unwrap();
    for flag in ["--from", "-f", "--dialect", "-d"] {
        let out = run(&["validate", flag, "codex", file]);
        assert_eq!(out.status.code(), Some(1), "{flag}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("the run has no ending"), "{flag}: {}", text(&out.stdout));
    }
    // Read as wuu, the codex lines are of no kind wuu knows: the flag is obeyed.
    let out = run(&["validate", "-f", "wuu", file]);
    assert!(!text(&out.stdout).contains("the run has no ending (no \"turn.completed\""), "{}", text(&out.stdout));
}

#[test]
fn exec_timeout_0_is_no_limit() {
    let fixture = common::fixtures().join("localcode/success.jsonl");
    let script = format!("sleep 0.5; cat '{}'", fixture.display());
    let out = run(&["exec", "--as", "localcode", "--timeout", "0", "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let last = common::values(&text(&out.stdout)).pop().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["status"], "ok", "{last}");
}

#[test]
fn an_agent_command_without_dashdash_gets_the_tip_to_add_it() {
    let out = run(&["exec", "--as", "localcode", "cat", "f.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("tip: the agent's command goes after --: agentgate exec [OPTIONS] -- CMD [ARG]..."), "{err}");
    // With -- the tip is not given (the command runs).
    let out = run(&["exec", "--as", "localcode", "--", "true"]);
    assert!(!text(&out.stderr).contains("tip: the agent's command"), "{}", text(&out.stderr));
}

#[test]
fn pretty_printed_json_gets_one_hint_not_a_line_each() {
    let pretty = "{\n  \"type\": \"result\",\n  \"status\": \"ok\",\n  \"exit_code\": 0\n}\n";
    let mut child = bin()
        .args(["--to", "canonical"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(pretty.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    // One line names a line of the input; the others are said of the whole input.
    let said: Vec<&str> = err.lines().filter(|l| l.contains("<stdin>:") && !l.contains("<stdin>: ")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(err.lines().count() <= 2, "{err}");
    assert!(said[0].starts_with("agentgate: <stdin>:1: JSON Lines expected"), "{err}");
    assert!(said[0].contains("`jq -c .`"), "{err}");
    // The output still ends with its terminal record.
    let last = common::values(&text(&out.stdout)).pop().unwrap();
    assert_eq!(last["type"], "terminal");
}

#[test]
fn the_readme_completion_line_makes_its_folder() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let line = readme.lines().find(|l| l.contains("completions bash >")).unwrap();
    assert!(line.starts_with("mkdir -p ~/.local/share/bash-completion/completions && "), "{line}");
}

#[test]
fn exec_stops_a_quiet_agent_once_its_reader_is_gone_within_kill_after() {
    // An agent that ignores SIGTERM and says nothing for a minute: only SIGKILL, --kill-after
    // after the reader went, stops it.
    let started = std::time::Instant::now();
    let mut child = bin()
        .args(["exec", "--as", "localcode", "--kill-after", "1s", "--", "sh", "-c", "trap '' TERM; sleep 60"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(10), "exec waited {took:?} for an agent nobody reads");
    assert!(took >= std::time::Duration::from_millis(1200), "SIGKILL came before --kill-after: {took:?}");
    assert!(status.code().is_some(), "exec itself exits, it is not killed: {status:?}");
}

#[test]
fn exec_tee_keeps_the_agents_own_stream_beside_the_translation() {
    let dir = common::temp_dir("tee");
    let fixture = common::fixtures().join("codex/success.jsonl");
    let kept = dir.join("agent.jsonl");
    let out =
        run(&["exec", "--as", "localcode", "--tee", kept.to_str().unwrap(), "--", "cat", fixture.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&kept).unwrap(), std::fs::read(&fixture).unwrap(), "the agent's bytes as they came");
    assert_eq!(common::values(&text(&out.stdout)).pop().unwrap()["type"], "result", "and stdout is localcode");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn exec_as_claude_code_states_the_wall_time_it_measured() {
    let fixture = common::fixtures().join("localcode/success.jsonl");
    let script = format!("sleep 0.4; cat '{}'", fixture.display());
    let out = run(&["exec", "--as", "claude-code", "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result = common::values(&text(&out.stdout)).pop().unwrap();
    assert_eq!(result["type"], "result");
    let ms = result["duration_ms"].as_u64().unwrap();
    assert!((400..30_000).contains(&ms), "duration_ms {ms}: the agent ran at least 400 ms");
}

#[test]
fn a_folder_is_translated_file_by_file_into_out_dir_its_tree_mirrored() {
    let dir = common::temp_dir("outdir");
    let runs = dir.join("runs");
    std::fs::create_dir_all(runs.join("team/a")).unwrap();
    std::fs::copy(common::fixtures().join("codex/success.jsonl"), runs.join("team/a/one.jsonl")).unwrap();
    std::fs::copy(common::fixtures().join("wuu/success.jsonl"), runs.join("two.jsonl")).unwrap();
    std::fs::write(runs.join("notes.txt"), "not a run").unwrap();
    let out_dir = dir.join("out");
    let out = run(&["--to", "localcode", runs.to_str().unwrap(), "--out-dir", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", text(&out.stdout));
    for rel in ["team/a/one.jsonl", "two.jsonl"] {
        let written = std::fs::read_to_string(out_dir.join(rel)).unwrap();
        let expected = common::translate(
            &std::fs::read(runs.join(rel)).unwrap(),
            if rel.starts_with("team") { agentgate::Dialect::Codex } else { agentgate::Dialect::Wuu },
            agentgate::Dialect::Localcode,
        );
        assert_eq!(written, expected, "{rel}");
    }
    assert!(!out_dir.join("notes.txt").exists());
    // Without --out-dir, the folder's runs go to stdout one after the other.
    let out = run(&["--to", "localcode", runs.to_str().unwrap()]);
    let results = common::values(&text(&out.stdout)).iter().filter(|v| v["type"] == "result").count();
    assert_eq!(results, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// codex.md, End of run: "A stream that ends without turn.completed or turn.failed is
/// incomplete". A resumed run cut in its second turn, written back to codex, ends with
/// `turn.failed`: the first turn's `turn.completed` does not end the second.
#[test]
fn a_codex_run_cut_in_a_later_turn_written_to_codex_ends_with_turn_failed() {
    let text = std::fs::read_to_string(common::fixtures().join("codex/resumed.jsonl")).unwrap();
    let cut: Vec<&str> = text.lines().take(7).collect();
    let input = format!("{}\n", cut.join("\n"));
    let out = common::translate(input.as_bytes(), agentgate::Dialect::Codex, agentgate::Dialect::Codex);
    let lines: Vec<&str> = out.lines().collect();
    // The lines read are copied as they were, then the ending the stream lacked.
    assert_eq!(&lines[..7], &cut[..], "{out}");
    assert_eq!(lines.len(), 8, "{out}");
    assert_eq!(
        lines[7],
        r#"{"type":"turn.failed","error":{"message":"incomplete: input ended without a terminal record"}}"#
    );
    // And the whole run still comes back as it was.
    let whole = common::translate(text.as_bytes(), agentgate::Dialect::Codex, agentgate::Dialect::Codex);
    assert_eq!(whole, text);
}
