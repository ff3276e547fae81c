//! `agentgate exec --as DIALECT -- CMD ARGS...`: run an agent and speak for it in another
//! agent's dialect, exit status and signals included.
//!
//! The child is spawned directly (no shell), with agentgate's stdin and stderr, in a process
//! group of its own; its stdout is translated line by line as it comes. SIGINT, SIGTERM and SIGHUP are forwarded to it (a
//! second SIGINT kills it); `--timeout` stops it with SIGTERM, then SIGKILL after a grace
//! period. When the child's stream has no terminal record, how the child ended decides the
//! outcome: our timeout, a signal (interrupted), a non-zero status (failed), else incomplete.
//! When the stream has one and the exit status disagrees with it, the stream wins and stderr
//! says so. agentgate then exits with the status the target agent would have.

use std::io::{self, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentgate::codec::EncodeOptions;
use agentgate::model::{Outcome, Terminal};
use agentgate::pipeline::translate_ending;
use agentgate::{Dialect, Options};

/// The exit status the target agent has for an outcome (its contract's outcome table).
/// canonical has none of its own: 0 for a completed run, 1 otherwise.
pub fn target_status(to: Dialect, outcome: Outcome) -> u8 {
    let c = to.contract();
    let code = c.outcome_code(outcome, "exit_code").or_else(|| c.outcome_code(outcome, "exit_status"));
    code.map_or(u8::from(outcome != Outcome::Completed), |c| u8::try_from(c).unwrap_or(1))
}

/// Parses `90`, `90s`, `1500ms`, `2m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len()));
    let n: f64 = num.parse().map_err(|_| format!("not a duration: {s:?} (try 30s, 500ms, 2m)"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("not a duration: {s:?} (units: ms, s, m, h)")),
    };
    Ok(Duration::from_secs_f64(secs))
}

pub struct Exec<'a> {
    pub to: Dialect,
    pub from: Option<Dialect>,
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    /// What the encoder is told (`--json-deltas`, `--include-partial-messages`); the rest is
    /// set here.
    pub encode: EncodeOptions,
    /// Read Claude Code's stream-json input protocol on stdin (see [`claude_handshake`]).
    pub stream_input: bool,
    pub command: &'a [String],
}

/// Stands in for Claude Code's side of its stdin protocol (`--input-format stream-json`, as
/// the Agent SDK's client speaks it): answers each `control_request` (`initialize` and any
/// other) with a `control_response` of subtype `success`, until the first `user` message, whose
/// text it gives back: the prompt for the agent. Lines that are not JSON objects are skipped.
/// `None` when stdin ends first.
pub fn claude_handshake(input: &mut dyn io::BufRead, out: &mut dyn Write) -> io::Result<Option<String>> {
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(line.trim()) else { continue };
        match m.get("type").and_then(serde_json::Value::as_str) {
            Some("control_request") => {
                let id = m.get("request_id").cloned().unwrap_or(serde_json::Value::Null);
                let initialize = m["request"]["subtype"] == "initialize";
                let body = if initialize {
                    serde_json::json!({"commands": [], "output_style": "default", "available_output_styles": ["default"], "models": [], "account": {}})
                } else {
                    serde_json::json!({})
                };
                let reply = serde_json::json!({
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": id, "response": body},
                });
                writeln!(out, "{reply}")?;
                out.flush()?;
            }
            Some("user") => {
                let content = &m["message"]["content"];
                let text = match content {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Array(blocks) => blocks
                        .iter()
                        .filter_map(|b| b.get("text").and_then(serde_json::Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                return Ok(Some(text));
            }
            _ => {}
        }
    }
}

/// Sends `sig` to the agent's process group: the agent and whatever it started, so that none of
/// them keeps its stdout open after it was stopped.
fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) on the process group of a child we spawned; no memory is involved.
    unsafe {
        libc::kill(-(pid as libc::pid_t), sig);
    }
}

impl Exec<'_> {
    pub fn run(&self) -> u8 {
        let mut opts = Options::new(self.from, self.to);
        opts.encode = self.encode.clone();
        opts.encode.source_date_epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|v| v.trim().parse().ok());
        // The agent runs in our directory: the working directory a target may require.
        opts.encode.cwd = std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned());
        let program = &self.command[0];
        // Claude Code's stdin protocol, before the agent starts: it has no prompt until then.
        let prompt = if self.stream_input && self.to == Dialect::ClaudeCode {
            let mut stdin = io::BufReader::new(io::stdin());
            match claude_handshake(&mut stdin, &mut io::stdout()) {
                Ok(p) => Some(p.unwrap_or_default()),
                Err(e) => {
                    eprintln!("agentgate: cannot read the stream-json input: {e}");
                    Some(String::new())
                }
            }
        } else {
            None
        };
        // The prompt goes where the agent's mappings/ entry says it takes one (with --from
        // naming its dialect); else, and for an agent that reads it there, on its stdin.
        let mut args: Vec<String> = self.command[1..].to_vec();
        let how = self.from.and_then(|d| d.contract().prompt.as_ref());
        let prompt = match (prompt, how) {
            (Some(p), Some(spec)) if spec.how == "flag" && spec.flag.is_some() => {
                args.extend([spec.flag.clone().unwrap_or_default(), p]);
                None
            }
            (Some(p), Some(spec)) if spec.how == "argument" => {
                args.push(p);
                None
            }
            (p, _) => p,
        };
        let stdout = io::stdout();
        let mut out = stdout.lock();

        // Its own process group: a terminal's Ctrl-C reaches agentgate alone, which forwards it
        // once, and a stop reaches everything the agent started.
        let spawned = Command::new(program)
            .args(&args)
            .stdin(if prompt.is_some() || self.stream_input { Stdio::piped() } else { Stdio::inherit() })
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                let code = if e.kind() == io::ErrorKind::NotFound { 127 } else { 126 };
                eprintln!("agentgate: cannot start {program}: {e}");
                let mut t = Terminal::new(Outcome::Failed);
                t.error = Some(format!("cannot start {program}: {e}"));
                let mut end = || Some(t.clone());
                let _ =
                    translate_ending(&b""[..], &mut out, &opts, self.to.encoder(&opts.encode), &mut |_| {}, &mut end);
                let _ = out.flush();
                return code;
            }
        };
        let pid = child.id();
        let child_stdout = child.stdout.take().expect("stdout is piped");
        if let Some(mut stdin) = child.stdin.take() {
            // The prompt on the agent's stdin (none where it went on the command line), closed
            // after it; what else comes on ours (the client closes it after the result) is read
            // and let go.
            std::thread::spawn(move || {
                if let Some(prompt) = prompt {
                    let _ = writeln!(stdin, "{prompt}");
                }
                drop(stdin);
                let _ = io::copy(&mut io::stdin(), &mut io::sink());
            });
        }

        // Signals to agentgate go to the child; a second SIGINT kills it.
        let signal = Arc::new(AtomicI32::new(0));
        let signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
        let handle = match signals {
            Ok(mut signals) => {
                let handle = signals.handle();
                let seen = Arc::clone(&signal);
                std::thread::spawn(move || {
                    let mut interrupts = 0;
                    for sig in signals.forever() {
                        seen.store(sig, Ordering::SeqCst);
                        if sig == libc::SIGINT {
                            interrupts += 1;
                        }
                        kill(pid, if interrupts > 1 { libc::SIGKILL } else { sig });
                    }
                });
                Some(handle)
            }
            Err(e) => {
                eprintln!("agentgate: cannot forward signals: {e}");
                None
            }
        };

        // The timeout: SIGTERM, then SIGKILL after the grace period.
        let timed_out = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicBool::new(false));
        if let Some(limit) = self.timeout {
            let (timed_out, finished, grace) = (Arc::clone(&timed_out), Arc::clone(&finished), self.kill_after);
            std::thread::spawn(move || {
                let start = Instant::now();
                while start.elapsed() < limit {
                    if finished.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20).min(limit));
                }
                timed_out.store(true, Ordering::SeqCst);
                kill(pid, libc::SIGTERM);
                let start = Instant::now();
                while start.elapsed() < grace {
                    if finished.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                kill(pid, libc::SIGKILL);
            });
        }

        // The child's exit status, waited for once, when its stream ends.
        let mut status: Option<std::process::ExitStatus> = None;
        let mut wait = |child: &mut std::process::Child| -> std::process::ExitStatus {
            if let Some(s) = status {
                return s;
            }
            let s = child.wait().unwrap_or_else(|_| std::process::ExitStatus::from_raw(1 << 8));
            finished.store(true, Ordering::SeqCst);
            status = Some(s);
            s
        };
        let describe = |s: std::process::ExitStatus, timed_out: bool, signal: i32| -> Terminal {
            if timed_out {
                let mut t = Terminal::new(Outcome::Timeout);
                t.reason = Some(format!(
                    "timeout: {program} was stopped after {}",
                    humanize(self.timeout.unwrap_or_default())
                ));
                return t;
            }
            if let Some(sig) = s.signal().or((signal != 0).then_some(signal)) {
                let mut t = Terminal::new(Outcome::Interrupted);
                t.reason = Some(format!("{program} ended by signal {sig}"));
                return t;
            }
            match s.code() {
                Some(0) | None => {
                    let mut t = Terminal::new(Outcome::Incomplete);
                    t.reason = Some(format!("{program} exited 0 without a terminal record"));
                    t
                }
                Some(code) => {
                    let mut t = Terminal::new(Outcome::Failed);
                    t.reason = Some(format!("{program} exited with status {code}"));
                    t.error = t.reason.clone();
                    t.exit_code = Some(i64::from(code));
                    t
                }
            }
        };

        let child_ref = &mut child;
        // The signal that ended the agent, where it decides the outcome (no terminal record).
        let mut ended_by = None;
        let mut end = || {
            let s = wait(child_ref);
            let (timed, sig) = (timed_out.load(Ordering::SeqCst), signal.load(Ordering::SeqCst));
            if !timed {
                ended_by = s.signal().or((sig != 0).then_some(sig));
            }
            Some(describe(s, timed, sig))
        };
        let name = format!("{program} (stdout)");
        let mut diag = |d: agentgate::Diagnostic| eprintln!("agentgate: {}", d.line_for(&name));
        let result =
            translate_ending(child_stdout, &mut out, &opts, self.to.encoder(&opts.encode), &mut diag, &mut end);
        let exit = child.wait();
        finished.store(true, Ordering::SeqCst);
        if let Some(h) = handle {
            h.close();
        }
        let summary = match result {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return 0,
            Err(e) => {
                eprintln!("agentgate: cannot write the output: {e}");
                return 74;
            }
        };
        let outcome = summary.outcome.unwrap_or(Outcome::Incomplete);
        // The stream's own terminal record wins over the exit status; say when they disagree.
        if let (true, Ok(s), Some(source)) = (summary.terminal_in_stream, exit, summary.source) {
            let c = source.contract();
            let expected = c.outcome_code(outcome, "exit_code").or_else(|| c.outcome_code(outcome, "exit_status"));
            let got = s.code().map(i64::from);
            if let (Some(expected), Some(got)) = (expected, got) {
                if expected != got && !(source == Dialect::Adal && outcome != Outcome::Completed && got == 1) {
                    eprintln!(
                        "agentgate: the stream says {} (exit status {expected} for {source}) but {program} exited {got}; the stream's terminal record stands",
                        outcome.name()
                    );
                }
            } else if s.signal().is_some() && got.is_none() {
                eprintln!(
                    "agentgate: {program} ended by signal {} after its terminal record ({}); the record stands",
                    s.signal().unwrap_or(0),
                    outcome.name()
                );
            }
        }
        match ended_by {
            // base-context exits 128 + the signal for the three it handles (its notes).
            Some(sig @ (libc::SIGHUP | libc::SIGINT | libc::SIGTERM))
                if self.to == Dialect::BaseContext && !summary.terminal_in_stream =>
            {
                128 + sig as u8
            }
            // The status the terminal record written states, where the target has one in it
            // (loom writes exit_status 1 for an incomplete run without a loom stop reason,
            // whatever its outcome table says for incomplete runs in general).
            _ => match summary.report.exit_status {
                Some(code) => u8::try_from(code).unwrap_or(1),
                None => target_status(self.to, outcome),
            },
        }
    }
}

fn humanize(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}
