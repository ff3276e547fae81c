//! The exit status and outcome side of `exec`: how the agent ended, as a terminal record when
//! its stream has none, and the status agentgate exits with, as the target agent would
//! (the tables in `mappings/`: each dialect's `outcomes`, `signal_exit` and `failure_exit`).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

use agentgate::model::{Outcome, Terminal};
use agentgate::{Dialect, Summary};

/// The exit status the target agent has for an outcome (its contract's outcome table).
/// canonical has none of its own: 0 for a completed run, 1 otherwise.
pub fn target_status(to: Dialect, outcome: Outcome) -> u8 {
    let c = to.contract();
    let code = c.outcome_code(outcome, "exit_code").or_else(|| c.outcome_code(outcome, "exit_status"));
    code.map_or(u8::from(outcome != Outcome::Completed), |c| u8::try_from(c).unwrap_or(1))
}

/// The run's end as the agent's exit says it, for a stream without a terminal record: our
/// timeout (`timed_out`, after that long), a signal, what the source dialect's contract says
/// the exit code means there (`exit_without_terminal`: gemini exits 0 when a signal reached its
/// worker), a non-zero status, else incomplete.
pub fn describe(
    program: &str,
    source: Option<Dialect>,
    s: ExitStatus,
    timed_out: Option<Duration>,
    signal: i32,
) -> Terminal {
    if let Some(limit) = timed_out {
        let mut t = Terminal::new(Outcome::Timeout);
        t.reason = Some(format!("timeout: {program} was stopped after {}", humanize(limit)));
        return t;
    }
    if let Some(sig) = s.signal().or((signal != 0).then_some(signal)) {
        let mut t = Terminal::new(Outcome::Interrupted);
        t.reason = Some(format!("{program} ended by signal {sig}"));
        return t;
    }
    let said = source.zip(s.code()).and_then(|(d, code)| d.contract().exit_without_terminal.get(&code.to_string()));
    if let (Some(&outcome), Some(code)) = (said, s.code()) {
        let mut t = Terminal::new(outcome);
        t.reason = Some(format!("{program} exited with status {code} without a terminal record"));
        t.exit_code = Some(i64::from(code));
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
}

/// The status agentgate exits with, speaking as `to` for a run translated to `summary`; says
/// on stderr where the agent's own exit disagrees with its stream's terminal record (which
/// stands). `ended_by`: the signal that ended the agent, where it decided the outcome.
pub fn exit_status(
    to: Dialect,
    program: &str,
    summary: &Summary,
    exit: Option<ExitStatus>,
    ended_by: Option<i32>,
) -> u8 {
    let outcome = summary.outcome.unwrap_or(Outcome::Incomplete);
    if let (true, Some(s), Some(source)) = (summary.terminal_in_stream, exit, summary.source) {
        let c = source.contract();
        let expected = c.outcome_code(outcome, "exit_code").or_else(|| c.outcome_code(outcome, "exit_status"));
        let got = s.code().map(i64::from);
        if let (Some(expected), Some(got)) = (expected, got) {
            // A failure code the agent gives for any unfinished run agrees with every outcome
            // but a completed one (mappings/adal.json's failure_exit; gemini's are many:
            // failure_exit_any).
            let any_failure = outcome != Outcome::Completed && (c.failure_exit_any || c.failure_exit == Some(got));
            if expected != got && !any_failure {
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
    // The status the target gives when a signal ends it before its stream says how the run
    // ended (base-context: 128 + the signal, mappings/base-context.json's signal_exit).
    let by_signal = ended_by.filter(|_| !summary.terminal_in_stream).and_then(|sig| {
        let name = match sig {
            libc::SIGHUP => "SIGHUP",
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            libc::SIGKILL => "SIGKILL",
            _ => return None,
        };
        to.contract().signal_exit.get(name).copied()
    });
    match (by_signal, summary.report.exit_status) {
        (Some(code), _) => code,
        // The status the terminal record written states, where the target has one in it
        // (loom writes exit_status 1 for an incomplete run without a loom stop reason,
        // whatever its outcome table says for incomplete runs in general).
        (None, Some(code)) => u8::try_from(code).unwrap_or(1),
        (None, None) => target_status(to, outcome),
    }
}

/// Parses `90`, `90s`, `1500ms`, `2m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len()));
    let n: f64 =
        num.parse().map_err(|_| format!("not a duration: {} (try 30s, 500ms, 2m)", agentgate::error::quoted(s)))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("not a duration: {} (units: ms, s, m, h)", agentgate::error::quoted(s))),
    };
    Ok(Duration::from_secs_f64(secs))
}

pub fn humanize(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}
