//! `agentgate acp -- CMD [ARG]...`: any CLI agent agentgate reads, served as an Agent Client
//! Protocol agent (version 1) on stdin and stdout, for ACP editors and clients.
//!
//! Threads, and why: the client's lines, each run's agent output and agentgate's own signals
//! arrive independently and each may block, so each has a reader thread of its own, and all of
//! them feed one channel. One state machine ([`server::Server`]) takes the channel's messages in
//! order and is the only writer of stdout, so no two messages interleave and each answer comes
//! after every update of its run (a run's records and its end travel the same channel, in
//! order). Deadlines (the cancel's grace, the kill ladder, `--timeout`) are the channel's
//! receive timeout. No async runtime: the official crate is types only and needs none, and a
//! handful of blocking threads is all this takes.
//!
//! A run is the pipeline of `agentgate exec` with an encoder that forwards each decoded record
//! and the normalizer's context to the state machine (as `summary` gathers its figures), which
//! turns them into updates with [`agentgate::dialect::acp::encode`].

pub mod client;
mod server;

use std::io;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use agentgate::codec::{Context, Encode, Hints, Record, Sink};
use agentgate::io::framing::Lines;
use agentgate::pipeline::translate_ending;
use agentgate::report::Fate;
use agentgate::{Dialect, Options};
use serde_json::Value;

pub use server::Server;

/// What `agentgate acp` was told on its command line.
#[derive(Debug, Clone)]
pub struct Config {
    pub from: Option<Dialect>,
    pub timeout: Option<Duration>,
    pub kill_after: Duration,
    pub cancel_grace: Duration,
    /// `--permission allow`: the source contract's approval arguments on every run.
    pub allow: bool,
    pub context_window: Option<u64>,
    pub max_line_bytes: usize,
    pub command: Vec<String>,
}

/// What reaches the state machine.
pub enum Msg {
    /// A line from the client: its JSON, or why it is not JSON.
    Client(Result<Value, String>),
    /// The client closed its side.
    ClientClosed,
    /// A record of run `run`, with the normalizer's context for it.
    Record { run: u64, rec: Box<Record>, ctx: Box<Context> },
    /// Run `run`'s agent closed its stdout and was reaped.
    RunEnded { run: u64, exit: Option<ExitStatus> },
    /// A signal to agentgate itself.
    Signal(i32),
}

/// Runs the server until the client closes its side (0), or a signal stops it (128 + N).
pub fn serve(config: Config) -> u8 {
    let (tx, rx) = std::sync::mpsc::channel();
    spawn_client_reader(tx.clone(), config.max_line_bytes);
    let signals = spawn_signal_reader(tx.clone());
    let stdout = io::stdout();
    let mut server = Server::new(config, tx, Box::new(stdout.lock()));
    let code = server.run(&rx);
    if let Some(h) = signals {
        h.close();
    }
    code
}

/// The client's lines, framed as every input is (a maximum length, CRLF, a BOM), parsed.
fn spawn_client_reader(tx: Sender<Msg>, max: usize) {
    std::thread::spawn(move || {
        let mut lines = Lines::new(io::stdin(), max);
        loop {
            let msg = match lines.next_frame() {
                Ok(None) | Err(_) => break,
                Ok(Some((_, frame))) => match agentgate::dialect::acp::rpc::client_line(frame, max) {
                    Some(read) => Msg::Client(read),
                    None => continue,
                },
            };
            if tx.send(msg).is_err() {
                return;
            }
        }
        let _ = tx.send(Msg::ClientClosed);
    });
}

fn spawn_signal_reader(tx: Sender<Msg>) -> Option<signal_hook::iterator::Handle> {
    let mut signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM, libc::SIGHUP]).ok()?;
    let handle = signals.handle();
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if tx.send(Msg::Signal(sig)).is_err() {
                return;
            }
        }
    });
    Some(handle)
}

/// The encoder of a run: every record, with its context, to the state machine.
struct Forward {
    tx: Sender<Msg>,
    run: u64,
}

impl Encode for Forward {
    fn hints(&self) -> Hints {
        // ACP matches a call's updates to it by id; output is kept by the updates themselves.
        Hints { matches_calls_by_id: true, call_arguments: false, call_output: false, ..Hints::default() }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, _sink: &mut Sink<'_>) -> Fate {
        let _ = self.tx.send(Msg::Record { run: self.run, rec: Box::new(rec.clone()), ctx: Box::new(ctx.clone()) });
        Fate::Absorbed
    }
}

/// A started agent: its stdout is read on a thread of its own, decoded and forwarded; its end
/// is sent once the stream closed and the child was reaped.
pub struct Started {
    pub pid: u32,
    /// Set when `--timeout` stopped it: what the child's end is then said to be.
    pub timed_out: Arc<AtomicBool>,
}

/// Reads run `run`'s agent on a thread: its stdout through the pipeline, its exit status after.
#[allow(clippy::too_many_arguments)]
fn read_run(
    tx: Sender<Msg>,
    run: u64,
    mut child: Child,
    from: Option<Dialect>,
    max_line_bytes: usize,
    program: String,
    timeout: Option<Duration>,
    timed_out: Arc<AtomicBool>,
    stdin_prompt: Option<String>,
) {
    if let (Some(mut stdin), Some(prompt)) = (child.stdin.take(), stdin_prompt) {
        // The prompt on the agent's stdin, then closed (on a thread: the agent may not read it).
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(prompt.as_bytes());
            let _ = stdin.write_all(b"\n");
        });
    }
    std::thread::spawn(move || {
        let stdout = child.stdout.take().expect("stdout is piped");
        let opts = Options::new(from, Dialect::Canonical).max_line_bytes(max_line_bytes);
        let name = format!("{program} (stdout)");
        let mut diag = |d: agentgate::Diagnostic| eprintln!("agentgate: {}", d.line_for(&name));
        let mut status = None;
        let child_ref = &mut child;
        let mut end = |source: Option<Dialect>| {
            let s = child_ref.wait().unwrap_or_else(|_| std::os::unix::process::ExitStatusExt::from_raw(1 << 8));
            status = Some(s);
            let timed = timed_out.load(Ordering::SeqCst).then(|| timeout.unwrap_or_default());
            Some(crate::exec::status::describe(&program, source, s, timed, 0))
        };
        let forward = Forward { tx: tx.clone(), run };
        let _ = translate_ending(stdout, &mut io::sink(), &opts, Box::new(forward), &mut diag, &mut end);
        let exit = status.or_else(|| child.wait().ok());
        let _ = tx.send(Msg::RunEnded { run, exit });
    });
}

/// Spawns the agent as `exec` does (no shell, a process group of its own, stderr inherited) in
/// `cwd`, its stdin the prompt (or nothing: never agentgate's stdin, the client's channel).
#[allow(clippy::too_many_arguments)]
pub fn start(
    tx: &Sender<Msg>,
    run: u64,
    program: &str,
    args: &[String],
    cwd: &std::path::Path,
    stdin_prompt: Option<String>,
    config: &Config,
) -> io::Result<Started> {
    use std::process::Stdio;
    let stdin = if stdin_prompt.is_some() { Stdio::piped() } else { Stdio::null() };
    let child = crate::exec::child::spawn(program, args, stdin, Some(cwd))?;
    let pid = child.id();
    let timed_out = Arc::new(AtomicBool::new(false));
    read_run(
        tx.clone(),
        run,
        child,
        config.from,
        config.max_line_bytes,
        program.to_string(),
        config.timeout,
        Arc::clone(&timed_out),
        stdin_prompt,
    );
    Ok(Started { pid, timed_out })
}
