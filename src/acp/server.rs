//! The state machine of one connection: the client's requests, each session's prompts and
//! runs, and the only writer of stdout.
//!
//! A session runs its prompts one at a time, in order; a run's updates are written as its
//! records come, its answer once its agent's stream closed and the agent was reaped (or, should
//! it never close, a grace period after SIGKILL). Cancel: SIGINT, SIGTERM after
//! `--cancel-grace`, SIGKILL after `--kill-after`; the answer is `cancelled` whatever the run
//! did, and the prompts queued behind it are answered `cancelled` after it, never run.

use std::collections::VecDeque;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentgate::codec::Context;
use agentgate::dialect::acp::encode::{answer, RunEnd, SessionState, Updates};
use agentgate::dialect::acp::rpc::{self, ClientMessage};
use agentgate::dialect::acp::schema::{
    AgentCapabilities, Error, Implementation, InitializeResponse, McpCapabilities, NewSessionResponse,
    PromptCapabilities, PromptRequest, PromptResponse, RequestId, SessionNotification, SessionUpdate,
};
use agentgate::dialect::acp::{protocol, ProtocolVersion};
use agentgate::Dialect;
use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use super::{Config, Msg};
use crate::exec::child::kill;
use crate::exec::status::humanize;

/// A prompt waiting for its run.
struct Queued {
    id: RequestId,
    text: String,
}

/// What comes next for a running prompt, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `--timeout`: SIGTERM.
    Timeout,
    /// The cancel's grace is over: SIGTERM.
    Term,
    /// SIGKILL.
    Kill,
    /// The agent's stream never closed after SIGKILL: the run is closed without it.
    GiveUp,
}

struct Running {
    key: u64,
    request: RequestId,
    pid: u32,
    updates: Updates,
    cancelled: bool,
    timed_out: Option<Arc<std::sync::atomic::AtomicBool>>,
    timed: bool,
    resumed: bool,
    next: Option<(Instant, Step)>,
}

struct Session {
    cwd: PathBuf,
    state: SessionState,
    queue: VecDeque<Queued>,
    /// Prompts cancelled while queued, answered after the running prompt's answer.
    cancelled: Vec<RequestId>,
    running: Option<Running>,
    /// The dialect the last run was read as (`--from`, else detected).
    source: Option<Dialect>,
    /// Said on stderr that this session's prompts run without their history.
    said_no_history: bool,
}

pub struct Server {
    config: Config,
    tx: Sender<Msg>,
    out: Box<dyn Write>,
    sessions: IndexMap<String, Session>,
    /// Which session each run key belongs to.
    runs: IndexMap<u64, String>,
    next_run: u64,
    initialized: bool,
    /// The client closed its side: no new prompts; exit once the runs ended.
    closing: bool,
    /// stdout is gone.
    gone: bool,
}

/// The name a program goes by in messages: its file name.
fn program_name(command: &[String]) -> String {
    command
        .first()
        .map(|p| Path::new(p).file_name().map_or(p.clone(), |f| f.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

impl Server {
    pub fn new(config: Config, tx: Sender<Msg>, out: Box<dyn Write>) -> Self {
        Server {
            config,
            tx,
            out,
            sessions: IndexMap::new(),
            runs: IndexMap::new(),
            next_run: 0,
            initialized: false,
            closing: false,
            gone: false,
        }
    }

    /// Serves until the client has closed its side and every run ended (0), stdout is gone
    /// (0), or a signal stops agentgate (128 + N).
    pub fn run(&mut self, rx: &Receiver<Msg>) -> u8 {
        loop {
            if self.gone || (self.closing && self.sessions.values().all(|s| s.running.is_none())) {
                self.stop_all(libc::SIGKILL);
                return 0;
            }
            let next = self.sessions.values().filter_map(|s| s.running.as_ref()?.next).map(|(at, _)| at).min();
            let msg = match next {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return 0,
                },
                None => match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return 0,
                },
            };
            match msg {
                None => self.deadlines(),
                Some(Msg::Client(Ok(v))) => self.client(v),
                Some(Msg::Client(Err(why))) => {
                    eprintln!("agentgate acp: a client line that is {why}");
                    self.error(RequestId::Null, protocol().code("parse_error"), format!("parse error: {why}"), None);
                }
                Some(Msg::ClientClosed) => self.client_closed(),
                Some(Msg::Record { run, rec, ctx }) => self.record(run, &rec, &ctx),
                Some(Msg::RunEnded { run, exit }) => self.run_ended(run, exit),
                Some(Msg::Signal(sig)) => return self.signalled(rx, sig),
            }
        }
    }

    // --- writing ---

    fn send(&mut self, v: &Value) {
        if self.gone {
            return;
        }
        let mut line = serde_json::to_vec(v).unwrap_or_default();
        line.push(b'\n');
        if self.out.write_all(&line).and_then(|()| self.out.flush()).is_err() {
            self.gone = true;
        }
    }

    fn result(&mut self, id: RequestId, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&mut self, id: RequestId, code: i32, message: String, data: Option<Value>) {
        let mut e = Error::new(code, message);
        e = e.data(data);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": e}));
    }

    fn update(&mut self, session: &str, update: SessionUpdate) {
        let n = SessionNotification::new(session.to_string(), update);
        self.send(&json!({"jsonrpc": "2.0", "method": "session/update", "params": n}));
    }

    fn answer(&mut self, id: RequestId, answer: Result<PromptResponse, Error>) {
        match answer {
            Ok(r) => self.result(id, serde_json::to_value(r).unwrap_or(Value::Null)),
            Err(e) => self.send(&json!({"jsonrpc": "2.0", "id": id, "error": e})),
        }
    }

    // --- the client's messages ---

    fn client(&mut self, v: Value) {
        let p = protocol();
        let (id, method, params) = match rpc::read_client(v) {
            Ok(ClientMessage::Request { id, method, params }) => (id, method, params),
            Ok(ClientMessage::Notification { method, params }) => return self.notification(&method, params),
            Ok(ClientMessage::Response) => {
                // agentgate acp sends no requests.
                eprintln!("agentgate acp: a response to no request of ours; ignored");
                return;
            }
            Err(r) => {
                eprintln!("agentgate acp: {}", r.said);
                return self.error(r.id, r.code, r.message, None);
            }
        };
        if method != "initialize" && !self.initialized {
            eprintln!("agentgate acp: {method} before initialize");
            return self.error(
                id,
                p.code("invalid_request"),
                format!("invalid request: {method} before initialize"),
                None,
            );
        }
        match method.as_str() {
            "initialize" => self.initialize(id, params),
            "session/new" => self.new_session(id, params),
            "session/prompt" => self.prompt(id, params),
            _ => {
                eprintln!("agentgate acp: method {method} is not served");
                self.error(id, p.code("method_not_found"), format!("method not found: {method}"), None)
            }
        }
    }

    fn bad_params(&mut self, id: RequestId, method: &str, why: String) {
        eprintln!("agentgate acp: {method}: {why}");
        self.error(id, protocol().code("invalid_params"), format!("invalid params: {why}"), None);
    }

    fn notification(&mut self, method: &str, params: Value) {
        match method {
            "session/cancel" => {
                if let Some(s) = params.get("sessionId").and_then(Value::as_str) {
                    self.cancel(s, None);
                }
            }
            "$/cancel_request" => {
                if let Some(rid) =
                    params.get("requestId").and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok())
                {
                    let found = self.sessions.iter().find_map(|(k, s)| {
                        let running = s.running.as_ref().is_some_and(|r| r.request == rid);
                        let queued = s.queue.iter().any(|q| q.id == rid);
                        (running || queued).then(|| k.clone())
                    });
                    if let Some(k) = found {
                        self.cancel(&k, Some(rid));
                    }
                }
            }
            // Unrecognized notifications are ignored (extensibility.mdx).
            _ => {}
        }
    }

    fn initialize(&mut self, id: RequestId, params: Value) {
        if let Err(why) = rpc::initialize(params) {
            return self.bad_params(id, "initialize", why);
        }
        self.initialized = true;
        let program = program_name(&self.config.command);
        let history = match self.config.from.and_then(|d| d.contract().resume.as_ref()) {
            Some(_) => "resume",
            None => "none",
        };
        let mut meta = Map::new();
        meta.insert(
            "agentgate".into(),
            json!({"source": self.config.from.map_or("auto", Dialect::name), "history": history}),
        );
        let caps = AgentCapabilities::new()
            .load_session(false)
            .prompt_capabilities(PromptCapabilities::new().image(false).audio(false).embedded_context(false))
            .mcp_capabilities(McpCapabilities::new().http(false).sse(false));
        let r = InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(caps)
            .auth_methods(Vec::new())
            .agent_info(
                Implementation::new("agentgate", env!("CARGO_PKG_VERSION")).title(format!("{program} via agentgate")),
            )
            .meta(meta);
        self.result(id, serde_json::to_value(r).unwrap_or(Value::Null));
    }

    fn new_session(&mut self, id: RequestId, params: Value) {
        let (req, names) = match rpc::new_session(params) {
            Ok(read) => read,
            Err(why) => return self.bad_params(id, "session/new", why),
        };
        let sid = session_id();
        let mut meta = Map::new();
        if !names.is_empty() {
            eprintln!(
                "agentgate acp: session {sid}: MCP servers {} are ignored: {} takes its tools from its own configuration",
                names.join(", "),
                program_name(&self.config.command)
            );
            meta.insert("agentgate".into(), json!({"ignoredMcpServers": names}));
        }
        self.sessions.insert(
            sid.clone(),
            Session {
                cwd: req.cwd,
                state: SessionState::default(),
                queue: VecDeque::new(),
                cancelled: Vec::new(),
                running: None,
                source: self.config.from,
                said_no_history: false,
            },
        );
        let r = NewSessionResponse::new(sid).meta((!meta.is_empty()).then_some(meta));
        self.result(id, serde_json::to_value(r).unwrap_or(Value::Null));
    }

    fn prompt(&mut self, id: RequestId, params: Value) {
        let req = match serde_json::from_value::<PromptRequest>(params) {
            Ok(r) => r,
            Err(e) => return self.bad_params(id, "session/prompt", e.to_string()),
        };
        let sid = req.session_id.0.to_string();
        if !self.sessions.contains_key(&sid) {
            return self.bad_params(id, "session/prompt", format!("sessionId: no session {sid}"));
        }
        let text = match rpc::prompt_text(&req.prompt) {
            Ok(text) => text,
            Err(why) => return self.bad_params(id, "session/prompt", why),
        };
        if self.closing {
            return self.error(id, protocol().code("request_cancelled"), "the client closed its input".into(), None);
        }
        let session = self.sessions.get_mut(&sid).expect("checked");
        session.queue.push_back(Queued { id, text });
        if session.running.is_none() {
            self.start_next(&sid);
        }
    }

    /// A cancel of the session's running prompt (or of `request`, running or queued).
    fn cancel(&mut self, sid: &str, request: Option<RequestId>) {
        let Some(session) = self.sessions.get_mut(sid) else { return };
        if let Some(rid) = &request {
            if let Some(at) = session.queue.iter().position(|q| &q.id == rid) {
                // One queued prompt: answered cancelled at once, never run.
                let q = session.queue.remove(at).expect("found");
                let a = Ok(PromptResponse::new(agentgate::dialect::acp::schema::StopReason::Cancelled));
                return self.answer(q.id, a);
            }
        }
        let grace = self.config.cancel_grace;
        let Some(run) = session.running.as_mut() else { return };
        if run.cancelled {
            return;
        }
        run.cancelled = true;
        let queued: Vec<RequestId> = session.queue.drain(..).map(|q| q.id).collect();
        session.cancelled.extend(queued);
        kill(run.pid, libc::SIGINT);
        run.next = Some((Instant::now() + grace, Step::Term));
    }

    fn client_closed(&mut self) {
        self.closing = true;
        let kill_after = self.config.kill_after;
        let mut queued = Vec::new();
        for s in self.sessions.values_mut() {
            queued.extend(s.queue.drain(..).map(|q| q.id));
            if let Some(run) = s.running.as_mut() {
                kill(run.pid, libc::SIGTERM);
                run.next = Some((Instant::now() + kill_after, Step::Kill));
            }
        }
        for id in queued {
            self.error(id, protocol().code("request_cancelled"), "the client closed its input".into(), None);
        }
    }

    // --- runs ---

    fn start_next(&mut self, sid: &str) {
        loop {
            let Some(session) = self.sessions.get_mut(sid) else { return };
            if session.running.is_some() {
                return;
            }
            let Some(q) = session.queue.pop_front() else { return };
            match self.start(sid, q) {
                Ok(()) => return,
                Err((id, answer)) => self.answer(id, answer),
            }
        }
    }

    /// Starts a run for a prompt, or gives back its answer where it cannot start.
    #[allow(clippy::result_large_err)]
    fn start(&mut self, sid: &str, q: Queued) -> Result<(), (RequestId, Result<PromptResponse, Error>)> {
        let p = protocol();
        let command = self.config.command.clone();
        let program = command[0].clone();
        let name = program_name(&command);
        let session = self.sessions.get_mut(sid).expect("a session");
        session.state.prompts += 1;
        // The command line decides where the prompt goes and how a session resumes (--from):
        // a dialect detected from a run's output changes neither, so every prompt's command is
        // the one the user wrote.
        let contract = self.config.from.map(Dialect::contract);
        let mut args: Vec<String> = command[1..].to_vec();
        // History: the contract's resume arguments, before a {prompt} argument.
        let mut resumed = false;
        match (contract.and_then(|c| c.resume.as_ref()), &session.state.resume_id) {
            (Some(r), Some(rid)) => {
                let extra: Vec<String> = r.args.iter().map(|a| a.replace("{session_id}", rid)).collect();
                let at = args.iter().position(|a| a.contains("{prompt}")).unwrap_or(args.len());
                args.splice(at..at, extra);
                resumed = true;
            }
            _ if session.state.prompts > 1 && !session.said_no_history => {
                session.said_no_history = true;
                eprintln!(
                    "agentgate acp: session {sid}: {name} is run afresh for each prompt: its contract names no way to resume, so earlier prompts are not carried"
                );
            }
            _ => {}
        }
        if self.config.allow {
            if let Some(a) = contract.and_then(|c| c.approval.as_ref()) {
                args.extend(a.allow.iter().cloned());
            }
        }
        let too_long = |n: usize| -> (RequestId, Result<PromptResponse, Error>) {
            let e = Error::new(
                p.code("invalid_params"),
                format!(
                    "invalid params: prompt: {n} bytes, too long for a command-line argument (at most {})",
                    p.limits.prompt_argument_bytes
                ),
            );
            (q.id.clone(), Err(e))
        };
        let stdin_prompt = if args.iter().any(|a| a.contains("{prompt}")) {
            if q.text.len() > p.limits.prompt_argument_bytes {
                return Err(too_long(q.text.len()));
            }
            for a in &mut args {
                *a = a.replace("{prompt}", &q.text);
            }
            None
        } else {
            let how = contract.and_then(|c| c.prompt.as_ref());
            let placed = crate::exec::place_prompt(&mut args, how, q.text.clone());
            if placed.is_none() && q.text.len() > p.limits.prompt_argument_bytes {
                return Err(too_long(q.text.len()));
            }
            placed
        };
        self.next_run += 1;
        let key = self.next_run;
        let session = self.sessions.get_mut(sid).expect("a session");
        let updates = Updates::new(session.state.prompts, &session.cwd, self.config.context_window);
        match super::start(&self.tx, key, &program, &args, &session.cwd, stdin_prompt, &self.config) {
            Ok(started) => {
                let next = self.config.timeout.map(|t| (Instant::now() + t, Step::Timeout));
                session.running = Some(Running {
                    key,
                    request: q.id,
                    pid: started.pid,
                    updates,
                    cancelled: false,
                    timed_out: Some(started.timed_out),
                    timed: false,
                    resumed,
                    next,
                });
                self.runs.insert(key, sid.to_string());
                Ok(())
            }
            Err(e) => {
                eprintln!("agentgate acp: cannot start {program}: {e}");
                let mut t = agentgate::model::Terminal::new(agentgate::Outcome::Failed);
                t.error = Some(format!("cannot start {program}: {e}"));
                let end = RunEnd { program: name, ..RunEnd::default() };
                let a = answer(&end, Some(&t), None, &[], &Default::default(), None, &session.state);
                Err((q.id, a))
            }
        }
    }

    fn record(&mut self, run: u64, rec: &agentgate::codec::Record, ctx: &Context) {
        let Some(sid) = self.runs.get(&run).cloned() else { return };
        let Some(session) = self.sessions.get_mut(&sid) else { return };
        if ctx.source.is_some() {
            session.source = ctx.source;
        }
        let Some(running) = session.running.as_mut().filter(|r| r.key == run) else { return };
        let updates = running.updates.record(rec, ctx, &mut session.state);
        for u in updates {
            self.update(&sid, u);
        }
    }

    fn run_ended(&mut self, run: u64, exit: Option<std::process::ExitStatus>) {
        let Some(sid) = self.runs.shift_remove(&run) else { return };
        let Some(session) = self.sessions.get_mut(&sid) else { return };
        let Some(mut running) = session.running.take_if(|r| r.key == run) else { return };
        let why = if running.cancelled {
            "cancelled"
        } else if running.timed {
            "timeout"
        } else {
            "no result"
        };
        let closing = running.updates.close(why, &session.state);
        let approval_hint = session.source.and_then(|d| {
            let a = d.contract().approval.as_ref()?;
            Some(format!("agentgate acp --from {d} --permission allow runs it with {}", a.allow.join(" ")))
        });
        let end = RunEnd {
            program: program_name(&self.config.command),
            cancelled: running.cancelled,
            timed_out: running.timed.then(|| humanize(self.config.timeout.unwrap_or_default())),
            signal: exit.and_then(|s| s.signal()),
            exit_code: exit.and_then(|s| s.code()),
            resumed: running.resumed,
            approval_hint,
        };
        let (turn, cost) = running.updates.turn_usage(&end, &mut session.state);
        if let Some(id) = running.updates.session_id.clone() {
            session.state.resume_id = Some(id);
        }
        let a = answer(
            &end,
            running.updates.terminal.as_ref(),
            running.updates.denied.as_ref(),
            &running.updates.approval,
            &turn,
            cost,
            &session.state,
        );
        let dropped = std::mem::take(&mut running.updates.dropped);
        let cancelled = std::mem::take(&mut session.cancelled);
        for u in closing {
            self.update(&sid, u);
        }
        self.answer(running.request, a);
        for id in cancelled {
            self.answer(id, Ok(PromptResponse::new(agentgate::dialect::acp::schema::StopReason::Cancelled)));
        }
        if !dropped.is_empty() {
            let what: Vec<String> = dropped.iter().map(|(k, n)| format!("{n} {k}")).collect();
            eprintln!("agentgate acp: session {sid}: ACP has no place for {} of this run", what.join(", "));
        }
        if !self.closing {
            self.start_next(&sid);
        }
    }

    /// Acts on the deadlines that have come.
    fn deadlines(&mut self) {
        let now = Instant::now();
        let kill_after = self.config.kill_after;
        let mut given_up = Vec::new();
        for s in self.sessions.values_mut() {
            let Some(run) = s.running.as_mut() else { continue };
            let Some((at, step)) = run.next else { continue };
            if at > now {
                continue;
            }
            run.next = match step {
                Step::Timeout => {
                    if !run.cancelled {
                        run.timed = true;
                        if let Some(flag) = &run.timed_out {
                            flag.store(true, Ordering::SeqCst);
                        }
                    }
                    kill(run.pid, libc::SIGTERM);
                    Some((now + kill_after, Step::Kill))
                }
                Step::Term => {
                    kill(run.pid, libc::SIGTERM);
                    Some((now + kill_after, Step::Kill))
                }
                Step::Kill => {
                    kill(run.pid, libc::SIGKILL);
                    Some((now + kill_after.max(Duration::from_secs(1)), Step::GiveUp))
                }
                Step::GiveUp => {
                    given_up.push(run.key);
                    None
                }
            };
        }
        for key in given_up {
            eprintln!("agentgate acp: run {key}: the agent's output never closed after SIGKILL; its prompt is answered without it");
            self.run_ended(key, None);
        }
    }

    /// A signal to agentgate: every open prompt answered -32800, the agents stopped (SIGTERM,
    /// SIGKILL after --kill-after), exit 128 + N.
    fn signalled(&mut self, rx: &Receiver<Msg>, sig: i32) -> u8 {
        let mut open = Vec::new();
        let mut pids = Vec::new();
        for s in self.sessions.values_mut() {
            if let Some(run) = s.running.take() {
                kill(run.pid, libc::SIGTERM);
                open.push(run.request);
                pids.push(run.pid);
            }
            open.extend(s.queue.drain(..).map(|q| q.id));
            open.append(&mut s.cancelled);
        }
        for id in open {
            self.error(
                id,
                protocol().code("request_cancelled"),
                format!("agentgate acp was stopped by signal {sig}"),
                None,
            );
        }
        let until = Instant::now() + self.config.kill_after;
        let mut ended = 0;
        while ended < pids.len() && Instant::now() < until {
            if let Ok(Msg::RunEnded { .. }) = rx.recv_timeout(Duration::from_millis(50)) {
                ended += 1;
            }
        }
        for pid in pids {
            kill(pid, libc::SIGKILL);
        }
        128u8.saturating_add(u8::try_from(sig).unwrap_or(0))
    }

    fn stop_all(&mut self, sig: i32) {
        for s in self.sessions.values() {
            if let Some(run) = &s.running {
                kill(run.pid, sig);
            }
        }
    }
}

/// A random version 4 UUID, from the system's random source.
fn session_id() -> String {
    use std::io::Read;
    let mut b = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if read.is_err() {
        // No random source: a time and process based id, unique enough for one connection.
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        b.copy_from_slice(&(t ^ (u128::from(std::process::id()) << 64)).to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}
