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

pub mod child;
mod handshake;
pub mod status;

use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentgate::codec::EncodeOptions;
use agentgate::dialect::otlp;
use agentgate::model::{Outcome, Terminal};
use agentgate::pipeline::translate_ending;
use agentgate::{Dialect, Options};

pub use handshake::claude_handshake;
pub use status::parse_duration;

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
    /// Where the run's telemetry goes when it ends (`--otlp-endpoint`), while stdout speaks `to`.
    pub export: Option<crate::export::Config>,
    /// Where the agent's own stream is kept as it came (`--tee`).
    pub tee: Option<std::path::PathBuf>,
    pub command: &'a [String],
}

/// The agent's stdout, each block read also written to the `--tee` file; a file that cannot be
/// written is said once and let go (the translation goes on).
struct Tee<R> {
    inner: R,
    copy: Option<(std::fs::File, std::path::PathBuf)>,
}

impl<R: io::Read> io::Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some((file, path)) = &mut self.copy {
            if let Err(e) = file.write_all(&buf[..n]) {
                eprintln!("agentgate: --tee {}: cannot write: {e}; no longer kept", path.display());
                self.copy = None;
            }
        }
        Ok(n)
    }
}

/// An agent that cannot start: said on stderr, and the run written as `to` ends as a failure
/// that says why; the exit status a shell gives such a command (127 not found, else 126).
pub fn cannot_start(program: &str, e: &io::Error, to: Dialect, opts: &Options, out: &mut impl Write) -> u8 {
    let code = if e.kind() == io::ErrorKind::NotFound { 127 } else { 126 };
    eprintln!("agentgate: cannot start {program}: {e}");
    let mut t = Terminal::new(Outcome::Failed);
    t.error = Some(format!("cannot start {program}: {e}"));
    let mut end = |_: Option<Dialect>| Some(t.clone());
    let _ = translate_ending(&b""[..], out, opts, to.encoder(&opts.encode), &mut |_| {}, &mut end);
    let _ = out.flush();
    code
}

/// Puts a prompt where the agent's contract says it takes one (after its flag, or as the last
/// argument); gives it back where the agent reads it on stdin (or the contract says nothing).
pub fn place_prompt(
    args: &mut Vec<String>,
    how: Option<&agentgate::contract::PromptSpec>,
    prompt: String,
) -> Option<String> {
    match how {
        Some(spec) if spec.how == "flag" && spec.flag.is_some() => {
            args.extend([spec.flag.clone().unwrap_or_default(), prompt]);
            None
        }
        Some(spec) if spec.how == "argument" => {
            args.push(prompt);
            None
        }
        _ => Some(prompt),
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
        // The --tee file, made before the agent starts: one that cannot be is a usage error.
        let tee = match &self.tee {
            None => None,
            Some(path) => match std::fs::File::create(path) {
                Ok(f) => Some((f, path.clone())),
                Err(e) => {
                    eprintln!("agentgate: --tee {}: cannot create: {e}", path.display());
                    return 74;
                }
            },
        };
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
        let prompt = prompt.and_then(|p| place_prompt(&mut args, how, p));
        let stdout = io::stdout();
        let mut out = stdout.lock();

        let stdin = if prompt.is_some() || self.stream_input { Stdio::piped() } else { Stdio::inherit() };
        let spawned = child::spawn(program, &args, stdin, None);
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => return cannot_start(program, &e, self.to, &opts, &mut out),
        };
        let pid = child.id();
        let child_stdout = Tee { inner: child.stdout.take().expect("stdout is piped"), copy: tee };
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
        let handle = child::forward_signals(pid, Arc::clone(&signal));
        // The timeout: SIGTERM, then SIGKILL after the grace period.
        let timed_out = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicBool::new(false));
        if let Some(limit) = self.timeout {
            child::stop_after(pid, limit, self.kill_after, Arc::clone(&timed_out), Arc::clone(&finished));
        }
        // The reader gone: the agent stopped then, not at our next write.
        let unread = Arc::new(AtomicBool::new(false));
        child::stop_when_unread(pid, self.kill_after, Arc::clone(&unread), Arc::clone(&finished));

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
        let child_ref = &mut child;
        // The signal that ended the agent, where it decides the outcome (no terminal record).
        let mut ended_by = None;
        let mut end = |source: Option<Dialect>| {
            let s = wait(child_ref);
            let (timed, sig) = (timed_out.load(Ordering::SeqCst), signal.load(Ordering::SeqCst));
            if !timed {
                ended_by = s.signal().or((sig != 0).then_some(sig));
            }
            Some(status::describe(program, source, s, timed.then(|| self.timeout.unwrap_or_default()), sig))
        };
        let name = format!("{program} (stdout)");
        let mut diag = |d: agentgate::Diagnostic| eprintln!("agentgate: {}", d.line_for(&name));
        let kept = otlp::Kept::default();
        let encoder: Box<dyn agentgate::codec::Encode> = match (&self.export, self.to) {
            (None, _) => self.to.encoder(&opts.encode),
            (Some(_), Dialect::Otlp) => Box::new(otlp::Encoder::keeping(&opts.encode, kept.clone())),
            (Some(_), _) => Box::new(otlp::Beside::new(self.to.encoder(&opts.encode), &opts.encode, kept.clone())),
        };
        let result = translate_ending(child_stdout, &mut out, &opts, encoder, &mut diag, &mut end);
        let exit = child.wait();
        finished.store(true, Ordering::SeqCst);
        if let Some(h) = handle {
            h.close();
        }
        // The run's telemetry, sent now it has ended; exec still exits as the agent would (what
        // could not be delivered is said, and kept in the spool).
        if let Some(config) = self.export.clone() {
            let _ = out.flush();
            let mut exporter = crate::export::Exporter::new(config, 1);
            match kept.borrow_mut().pop() {
                Some(t) => exporter.add(t),
                None => exporter.add_missing(),
            }
            exporter.finish().status();
        }
        let summary = match result {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return 0,
            Err(e) => {
                eprintln!("agentgate: cannot write the output: {e}");
                return 74;
            }
        };
        status::exit_status(self.to, program, &summary, exit.ok(), ended_by)
    }
}
