//! `agentgate exec --as DIALECT --from acp -- AGENT`: agentgate as an ACP client. It starts the
//! agent, speaks the client's side (initialize, session/new in the current directory, one
//! session/prompt), answers the agent's requests (permission by policy, the rest -32601), and
//! writes both sides' lines into a transcript, which the ordinary pipeline reads with the acp
//! decoder (the one `agentgate --from acp FILE` reads recorded transcripts with) and writes as
//! DIALECT as it comes. So a live agent and a recording of it translate the same way.
//!
//! Threads: the agent's stdout and agentgate's signals feed one channel; the client loop alone
//! writes the agent's stdin and the transcript; the pipeline, on the main thread, alone writes
//! stdout. A signal or `--timeout` sends `session/cancel` once (pending permission requests
//! answered `cancelled`), then, with no answer after `--kill-after`, SIGTERM and SIGKILL; a second
//! SIGINT kills at once.

use std::io::{self, BufRead, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentgate::dialect::acp::protocol;
use agentgate::dialect::acp::schema::{
    ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation, InitializeRequest, NewSessionRequest,
    PromptRequest, TextContent,
};
use agentgate::dialect::acp::ProtocolVersion;
use agentgate::model::{Outcome, Terminal};
use agentgate::pipeline::translate_ending;
use agentgate::{Dialect, Options};
use serde_json::{json, Value};

use crate::exec::child::kill;
use crate::exec::status;

/// How the client answers the agent's permission requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// A `reject_once` that does not end the turn, else `reject_always`.
    Deny,
    /// `allow_once`, else `allow_always`.
    Allow,
    /// Cancel the turn, as a headless agent stops for want of approval.
    AskNever,
}

impl Policy {
    pub fn parse(word: &str) -> Policy {
        match word {
            "allow" => Policy::Allow,
            "ask-never" => Policy::AskNever,
            _ => Policy::Deny,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Policy::Deny => "deny",
            Policy::Allow => "allow",
            Policy::AskNever => "ask-never",
        }
    }
}

enum Ev {
    Line(String),
    Eof,
    Signal(i32),
}

/// A reader over the transcript's lines as the client hands them over.
struct Transcript {
    rx: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    at: usize,
}

impl Read for Transcript {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.buf.len() {
            match self.rx.recv() {
                Ok(b) => {
                    self.buf = b;
                    self.at = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.at);
        out[..n].copy_from_slice(&self.buf[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// What the end hook is told of how the agent was stopped.
struct Stopped {
    timed_out: AtomicBool,
    signal: AtomicI32,
    /// The client gave up before a prompt ran (the handshake failed), and why.
    failure: std::sync::Mutex<Option<String>>,
}

/// Runs the agent behind `exec --from acp`; the exit status agentgate exits with.
pub fn run(exec: &crate::exec::Exec<'_>, policy: Policy, prompt: Option<String>) -> u8 {
    let mut opts = Options::new(Some(Dialect::Acp), exec.to);
    opts.encode = exec.encode.clone();
    opts.encode.source_date_epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|v| v.trim().parse().ok());
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    opts.encode.cwd = Some(cwd.to_string_lossy().into_owned());
    let program = exec.command[0].clone();

    // The prompt: --prompt, else the user message of Claude's stdin protocol, else all of stdin.
    let prompt = match prompt {
        Some(p) => p,
        None if exec.stream_input && exec.to == Dialect::ClaudeCode => {
            let mut stdin = io::BufReader::new(io::stdin());
            crate::exec::claude_handshake(&mut stdin, &mut io::stdout()).ok().flatten().unwrap_or_default()
        }
        None => {
            let mut text = String::new();
            let _ = io::stdin().read_to_string(&mut text);
            text.trim_end_matches('\n').to_string()
        }
    };
    if prompt.trim().is_empty() {
        eprintln!("agentgate: exec --from acp needs a prompt: --prompt TEXT, or the text on stdin");
        return 2;
    }

    let stdout = io::stdout();
    let mut out = stdout.lock();
    let spawned = crate::exec::child::spawn(&program, &exec.command[1..], Stdio::piped(), None);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return crate::exec::cannot_start(&program, &e, exec.to, &opts, &mut out),
    };
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<Ev>();
    let agent_out = child.stdout.take().expect("stdout is piped");
    let reader_tx = tx.clone();
    std::thread::spawn(move || {
        let mut lines = io::BufReader::new(agent_out);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line).trim_end_matches(['\n', '\r']).to_string();
                    if reader_tx.send(Ev::Line(text)).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = reader_tx.send(Ev::Eof);
    });
    let signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM, libc::SIGHUP]).ok();
    let handle = signals.as_ref().map(|s| s.handle());
    if let Some(mut signals) = signals {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for sig in signals.forever() {
                if tx.send(Ev::Signal(sig)).is_err() {
                    return;
                }
            }
        });
    }
    drop(tx);

    let (ttx, trx) = std::sync::mpsc::channel::<Vec<u8>>();
    let stopped = Arc::new(Stopped {
        timed_out: AtomicBool::new(false),
        signal: AtomicI32::new(0),
        failure: std::sync::Mutex::new(None),
    });
    let stdin = child.stdin.take();
    let client = Client {
        stdin,
        transcript: ttx,
        pid,
        policy,
        prompt,
        cwd,
        to: exec.to,
        kill_after: exec.kill_after,
        timeout: exec.timeout.map(|t| Instant::now() + t),
        stopped: Arc::clone(&stopped),
        session: None,
        cancelled: false,
        answered: false,
        pending: Vec::new(),
        next: None,
        interrupts: 0,
    };
    let loop_thread = std::thread::spawn(move || client.serve(&rx));

    let mut exit: Option<std::process::ExitStatus> = None;
    let child_ref = &mut child;
    let mut ended_by = None;
    let timeout = exec.timeout;
    let stopped_end = Arc::clone(&stopped);
    let mut end = |source: Option<Dialect>| {
        let s = child_ref.wait().unwrap_or_else(|_| std::process::ExitStatus::from_raw(1 << 8));
        exit = Some(s);
        if let Some(why) = stopped_end.failure.lock().ok().and_then(|f| f.clone()) {
            let mut t = Terminal::new(Outcome::Failed);
            t.error = Some(why);
            return Some(t);
        }
        let timed = stopped_end.timed_out.load(Ordering::SeqCst);
        let sig = stopped_end.signal.load(Ordering::SeqCst);
        if !timed {
            ended_by = s.signal().or((sig != 0).then_some(sig));
        }
        Some(status::describe(&program, source, s, timed.then(|| timeout.unwrap_or_default()), sig))
    };
    let name = format!("{program} (stdout)");
    let mut diag = |d: agentgate::Diagnostic| eprintln!("agentgate: {}", d.line_for(&name));
    let transcript = Transcript { rx: trx, buf: Vec::new(), at: 0 };
    let result = translate_ending(transcript, &mut out, &opts, exec.to.encoder(&opts.encode), &mut diag, &mut end);
    let _ = loop_thread.join();
    let exit = exit.or_else(|| child.wait().ok());
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
    status::exit_status(exec.to, &exec.command[0], &summary, exit, ended_by)
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Term,
    Kill,
}

struct Client {
    stdin: Option<ChildStdin>,
    transcript: Sender<Vec<u8>>,
    pid: u32,
    policy: Policy,
    prompt: String,
    cwd: std::path::PathBuf,
    to: Dialect,
    kill_after: Duration,
    timeout: Option<Instant>,
    stopped: Arc<Stopped>,
    session: Option<String>,
    cancelled: bool,
    answered: bool,
    /// The agent's permission requests not answered yet.
    pending: Vec<Value>,
    next: Option<(Instant, Step)>,
    interrupts: u32,
}

impl Client {
    fn serve(mut self, rx: &Receiver<Ev>) {
        let init = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(
                ClientCapabilities::new()
                    .fs(FileSystemCapabilities::new().read_text_file(false).write_text_file(false))
                    .terminal(false),
            )
            .client_info(
                Implementation::new("agentgate", env!("CARGO_PKG_VERSION"))
                    .title(format!("agentgate exec --as {}", self.to)),
            );
        self.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}));
        loop {
            let deadline = [self.next.map(|(at, _)| at), self.timeout.filter(|_| !self.cancelled && !self.answered)]
                .into_iter()
                .flatten()
                .min();
            let ev = match deadline {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(ev) => Some(ev),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(ev) => Some(ev),
                    Err(_) => break,
                },
            };
            match ev {
                None => self.deadline(),
                Some(Ev::Eof) => break,
                Some(Ev::Line(text)) => {
                    let _ = self.transcript.send(format!("{text}\n").into_bytes());
                    if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(&text) {
                        self.message(Value::Object(m));
                    }
                }
                Some(Ev::Signal(sig)) => {
                    self.stopped.signal.store(sig, Ordering::SeqCst);
                    if sig == libc::SIGINT {
                        self.interrupts += 1;
                    }
                    if self.interrupts > 1 {
                        kill(self.pid, libc::SIGKILL);
                    } else if self.session.is_some() && !self.answered {
                        self.cancel("signal");
                    } else {
                        kill(self.pid, sig);
                    }
                }
            }
        }
        // The transcript ends with the agent's stdout.
    }

    fn deadline(&mut self) {
        let now = Instant::now();
        if let Some((at, step)) = self.next {
            if at <= now {
                match step {
                    Step::Term => {
                        kill(self.pid, libc::SIGTERM);
                        self.next = Some((now + self.kill_after, Step::Kill));
                    }
                    Step::Kill => {
                        kill(self.pid, libc::SIGKILL);
                        self.next = None;
                    }
                }
                return;
            }
        }
        if self.timeout.is_some_and(|t| t <= now) && !self.cancelled && !self.answered {
            self.stopped.timed_out.store(true, Ordering::SeqCst);
            if self.session.is_some() {
                self.cancel("timeout");
            } else {
                kill(self.pid, libc::SIGTERM);
                self.next = Some((now + self.kill_after, Step::Kill));
            }
        }
    }

    /// Writes a message to the agent, and into the transcript.
    fn send(&mut self, v: &Value) {
        let line = format!("{v}\n");
        let _ = self.transcript.send(line.clone().into_bytes());
        if let Some(stdin) = self.stdin.as_mut() {
            if stdin.write_all(line.as_bytes()).and_then(|()| stdin.flush()).is_err() {
                self.stdin = None;
            }
        }
    }

    /// The handshake failed: the run is failed, the agent let go.
    fn fail(&mut self, why: String) {
        eprintln!("agentgate: {why}");
        if let Ok(mut f) = self.stopped.failure.lock() {
            *f = Some(why);
        }
        self.stdin = None;
        self.next = Some((Instant::now() + self.kill_after, Step::Term));
    }

    fn message(&mut self, m: Value) {
        let id = m.get("id").cloned();
        match (m.get("method").and_then(Value::as_str), id) {
            (Some("session/request_permission"), Some(id)) => self.permission(id, &m["params"]),
            (Some(method), Some(id)) => {
                // fs/*, terminal/* and the rest: not offered.
                let e = json!({"code": protocol().code("method_not_found"), "message": format!("method not found: {method}")});
                self.send(&json!({"jsonrpc": "2.0", "id": id, "error": e}));
            }
            (None, Some(id)) => self.response(&id, &m),
            _ => {}
        }
    }

    fn response(&mut self, id: &Value, m: &Value) {
        let error = m.get("error").filter(|e| !e.is_null());
        match id.as_i64() {
            Some(0) => {
                if let Some(e) = error {
                    return self.fail(format!(
                        "initialize failed: {} (code {})",
                        e["message"].as_str().unwrap_or(""),
                        e["code"]
                    ));
                }
                let version = m["result"]["protocolVersion"].as_u64();
                if version != Some(1) {
                    // initialization.mdx: the client SHOULD close the connection.
                    return self.fail(format!(
                        "the agent speaks ACP version {}, agentgate version 1",
                        m["result"]["protocolVersion"]
                    ));
                }
                let new = NewSessionRequest::new(self.cwd.clone());
                self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}));
            }
            Some(1) => {
                if let Some(e) = error {
                    let mut why =
                        format!("session/new failed: {} (code {})", e["message"].as_str().unwrap_or(""), e["code"]);
                    if e["code"].as_i64() == Some(i64::from(protocol().code("auth_required"))) {
                        why.push_str(": log in with the agent's own CLI first");
                    }
                    return self.fail(why);
                }
                let Some(sid) = m["result"]["sessionId"].as_str().map(str::to_string) else {
                    return self.fail("session/new gave no sessionId".into());
                };
                self.session = Some(sid.clone());
                let p = PromptRequest::new(sid, vec![ContentBlock::Text(TextContent::new(self.prompt.clone()))]);
                self.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": p}));
            }
            Some(2) => {
                // The answer ends the run: the agent's stdin closed, --kill-after to exit.
                self.answered = true;
                self.stdin = None;
                self.next = Some((Instant::now() + self.kill_after, Step::Term));
            }
            _ => {}
        }
    }

    fn permission(&mut self, id: Value, params: &Value) {
        let title = params["toolCall"]["title"].as_str().unwrap_or("a tool call").to_string();
        if self.cancelled {
            return self.send(&json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": {"outcome": "cancelled"}}}));
        }
        let options: Vec<(String, String)> = params["options"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| (o["optionId"].as_str().unwrap_or("").to_string(), o["kind"].as_str().unwrap_or("").to_string()))
            .collect();
        let find = |kind: &str, skip_ending: bool| {
            options
                .iter()
                .find(|(oid, k)| k == kind && !(skip_ending && protocol().turn_ending_options.ids.contains(oid)))
                .map(|(oid, _)| oid.clone())
        };
        let reject = || find("reject_once", true).or_else(|| find("reject_always", false));
        let choice = match self.policy {
            Policy::Allow => find("allow_once", false).or_else(|| find("allow_always", false)).or_else(reject),
            Policy::Deny => reject(),
            Policy::AskNever => None,
        };
        let meta = json!({"agentgate": {"policy": self.policy.word()}});
        match choice {
            Some(option) => {
                if self.policy == Policy::Allow && options.iter().any(|(o, k)| *o == option && k.starts_with("allow")) {
                    eprintln!("agentgate: allowed {title}");
                }
                let result = json!({"outcome": {"outcome": "selected", "optionId": option}, "_meta": meta});
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            None => {
                // ask-never, or no option to refuse with: the turn stops, as a headless agent's.
                self.pending.push(id.clone());
                self.cancel("ask-never");
            }
        }
    }

    /// Cancels the turn once: session/cancel, pending permission requests answered cancelled,
    /// --kill-after for the answer.
    fn cancel(&mut self, why: &str) {
        if self.cancelled {
            return;
        }
        self.cancelled = true;
        if let Some(sid) = self.session.clone() {
            let params = json!({"sessionId": sid, "_meta": {"agentgate": {"reason": why}}});
            self.send(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": params}));
        }
        for id in std::mem::take(&mut self.pending) {
            let mut result = json!({"outcome": {"outcome": "cancelled"}});
            if why == "ask-never" {
                result["_meta"] = json!({"agentgate": {"policy": "ask-never"}});
            }
            self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
        }
        self.next = Some((Instant::now() + self.kill_after, Step::Term));
    }
}
