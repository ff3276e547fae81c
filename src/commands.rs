//! The commands of the binary: translate, detect, validate, summary, exec and dialects, each
//! over the library, with what they print and the exit status they give.

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use agentgate::codec::EncodeOptions;
use agentgate::io::readahead::ReadAhead;
use agentgate::pipeline::{detect, Stop};
use agentgate::validate::validate;
use agentgate::{translate, Dialect, Options};

use crate::cli::{self, Translate};
#[cfg(unix)]
use crate::exec;

/// Exit statuses, as sysexits(3) names them.
pub(crate) mod status {
    pub const OK: u8 = 0;
    /// `detect` could not tell; `validate` found problems.
    pub const UNDECIDED: u8 = 1;
    pub const DATA: u8 = 65;
    pub const NO_INPUT: u8 = 66;
    pub const IO: u8 = 74;
}

/// The width a table for the terminal fits: `COLUMNS` where set, else the terminal's.
pub(crate) fn table_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()).filter(|n| *n > 0) {
        return Some(n);
    }
    terminal_size::terminal_size_of(io::stdout()).map(|(w, _)| usize::from(w.0))
}

/// The OpenTelemetry conventions `--otlp-semconv` names.
pub(crate) fn semconv(word: &str) -> agentgate::Semconv {
    match word {
        "latest" => agentgate::Semconv::Latest,
        _ => agentgate::Semconv::Released,
    }
}

/// Flags that one target alone reads, given with another: said on stderr, and the stream is
/// translated as asked.
fn warn_unused(to: Dialect, flag: &str, json_deltas: bool, partial_messages: bool) {
    if json_deltas && to != Dialect::BaseContext {
        eprintln!("agentgate: warning: --json-deltas does nothing with {flag} {to} (it is base-context's)");
    }
    if partial_messages && to != Dialect::ClaudeCode {
        eprintln!("agentgate: warning: --include-partial-messages does nothing with {flag} {to} (it is claude-code's)");
    }
}

pub(crate) fn dialects() -> u8 {
    let width = Dialect::target_names().iter().map(|n| n.len()).max().unwrap_or(0);
    let mut out = String::new();
    for d in Dialect::targets() {
        out.push_str(&format!("{:width$}  {}\n", d.name(), d.description()));
    }
    write_out(out.as_bytes())
}

pub(crate) fn write_out(bytes: &[u8]) -> u8 {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => status::OK,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status::OK,
        Err(e) => {
            eprintln!("agentgate: cannot write the output: {e}");
            status::IO
        }
    }
}

/// How messages name a file: `<stdin>` for `-`, else its path on one line ([`agentgate::error::one_line`]).
fn display(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".into()
    } else {
        agentgate::error::one_line(&path.display().to_string()).into_owned()
    }
}

/// The input at `path`, read ahead on a thread of its own ([`ReadAhead`]).
fn open(path: &Path) -> io::Result<ReadAhead> {
    if path == Path::new("-") {
        Ok(ReadAhead::new(io::stdin()))
    } else {
        let file = File::open(path)?;
        // A directory opens on Unix, and fails only when read: refused here, as a file that
        // cannot be opened is (`summary` is the command that reads folders).
        if file.metadata()?.is_dir() {
            return Err(io::Error::other("is a directory"));
        }
        Ok(ReadAhead::new(file))
    }
}

pub(crate) fn detect_command(files: &[PathBuf]) -> u8 {
    let paths = if files.is_empty() { vec![PathBuf::from("-")] } else { collect(files) };
    hint_if_terminal(&paths);
    let named = paths.len() > 1 || files.iter().any(|f| f.is_dir());
    let (mut out, mut code) = (String::new(), status::OK);
    for path in &paths {
        let input = match open(path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("agentgate: {}: cannot open: {e}", display(path));
                code = code.max(status::NO_INPUT);
                continue;
            }
        };
        match detect(input) {
            Ok(d) if named => out.push_str(&format!("{}: {d}\n", display(path))),
            Ok(d) => out.push_str(&format!("{d}\n")),
            Err(why) => {
                eprintln!("agentgate: {}: cannot tell the dialect: {why}", display(path));
                code = code.max(status::UNDECIDED);
            }
        }
    }
    match write_out(out.as_bytes()) {
        status::OK => code,
        other => other,
    }
}

#[cfg(unix)]
pub(crate) fn exec_command(
    to: &str,
    from: &str,
    timeout: Option<&str>,
    kill_after: &str,
    encode: EncodeOptions,
    stream_input: bool,
    command: &[String],
) -> u8 {
    let parse = |s: &str| {
        exec::parse_duration(s).map_err(|e| {
            eprintln!("agentgate: {e}");
        })
    };
    let Ok(kill_after) = parse(kill_after) else { return 2 };
    let timeout = match timeout.map(parse).transpose() {
        Ok(t) => t,
        Err(()) => return 2,
    };
    let Ok(to) = to.parse() else { return 2 };
    warn_unused(to, "--as", encode.json_deltas, encode.include_partial_messages);
    exec::Exec { to, from: from.parse().ok(), timeout, kill_after, encode, stream_input, command }.run()
}

pub(crate) fn validate_command(
    dialect: &str,
    warnings: bool,
    strict: bool,
    format: cli::FindingFormat,
    paths: &[PathBuf],
) -> u8 {
    use agentgate::contract::{Finding, Severity};
    let files = if paths.is_empty() { vec![PathBuf::from("-")] } else { collect(paths) };
    hint_if_terminal(&files);
    let (mut failed, mut unopened) = (false, false);
    let mut out = String::new();
    let say = |name: &str, f: &Finding, out: &mut String| match format {
        cli::FindingFormat::Text => {
            let message = match f.severity {
                Severity::Problem => f.message.clone(),
                Severity::Warning => format!("warning: {}", f.message),
            };
            out.push_str(&agentgate::Diagnostic { line: f.line, message }.line_for(name));
            out.push('\n');
        }
        cli::FindingFormat::Json => {
            let v = serde_json::json!({
                "file": name, "line": f.line, "severity": f.severity.name(), "rule": f.rule, "message": f.message,
            });
            out.push_str(&v.to_string());
            out.push('\n');
        }
    };
    for path in &files {
        let name = display(path);
        let input = match open(path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("agentgate: {name}: cannot open: {e}");
                unopened = true;
                continue;
            }
        };
        let mut findings = Vec::new();
        let result = validate(input, dialect.parse().ok(), &mut |f| findings.push(f));
        if let Err(why) = result {
            eprintln!("agentgate: {name}: cannot tell the dialect: {why}");
            let f = Finding {
                line: 0,
                severity: Severity::Problem,
                rule: "dialect".into(),
                message: format!("cannot tell the dialect: {why}"),
            };
            if format == cli::FindingFormat::Json {
                say(&name, &f, &mut out);
            }
            failed = true;
            continue;
        }
        for f in findings {
            let counts = f.severity == Severity::Problem || strict;
            failed |= counts;
            if counts || warnings {
                say(&name, &f, &mut out);
            }
        }
    }
    match write_out(out.as_bytes()) {
        status::OK if failed => status::UNDECIDED,
        status::OK if unopened => status::NO_INPUT,
        other => other,
    }
}

/// Reading standard input from a terminal would wait silently for a stream nobody types: said
/// once, on stderr.
fn hint_if_terminal(files: &[PathBuf]) {
    if files.iter().any(|f| f == Path::new("-")) && io::stdin().is_terminal() {
        eprintln!("agentgate: reading a stream from the terminal; end it with Ctrl-D, or give a FILE");
    }
}

/// The files `paths` name, in the order given: files as they are, directories searched for
/// `*.jsonl` and `*.ndjson` (their files in sorted order; one that holds none is said on stderr).
fn collect(paths: &[PathBuf]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            out.push(dir.to_path_buf());
            return;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl" || x == "ndjson") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found);
            if found.is_empty() {
                eprintln!("agentgate: {}: no *.jsonl or *.ndjson files in this directory", display(p));
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

pub(crate) fn summary_command(
    from: &str,
    full: bool,
    totals: bool,
    format: Option<cli::Format>,
    strict: bool,
    paths: &[PathBuf],
) -> u8 {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use agentgate::summary::{summarize, RunSummary};

    let from: Option<Dialect> = from.parse().ok();
    // No PATH: the run on standard input, as the other commands read it.
    let files = if paths.is_empty() { vec![PathBuf::from("-")] } else { collect(paths) };
    hint_if_terminal(&files);
    let summarize_one = |path: &PathBuf| -> RunSummary {
        let name = display(path);
        match open(path) {
            Ok(input) => summarize(input, &name, from, full),
            Err(e) => RunSummary { file: name, problems: vec![format!("cannot open: {e}")], ..RunSummary::default() },
        }
    };
    // Files are summarized in parallel; the output keeps the sorted order.
    let slots: Vec<Mutex<Option<RunSummary>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let progress = files.len() > 1 && std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let s = summarize_one(path);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        // Drawn once the batch has taken a moment, each time over the whole line (\x1b[K
        // clears what a longer one left), and cleared at the end.
        let mut drawn = false;
        while progress && done.load(Ordering::Relaxed) < files.len() {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let n = done.load(Ordering::Relaxed);
            let secs = started.elapsed().as_secs_f64();
            if secs >= 0.5 && n < files.len() {
                eprint!("\r\x1b[Kagentgate: {n}/{} files, {:.0} files/s", files.len(), n as f64 / secs);
                drawn = true;
            }
        }
        if drawn {
            eprint!("\r\x1b[K");
        }
    });
    let runs: Vec<RunSummary> =
        slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_default()).collect();
    let mut unreadable = false;
    for r in &runs {
        if r.dialect.is_none() {
            unreadable = true;
            let why = r.problems.first().map_or("not a known dialect", String::as_str);
            eprintln!("agentgate: {}", agentgate::error::one_line(&format!("{}: {why}", r.file)));
        }
    }
    let format =
        format.unwrap_or(if std::io::stdout().is_terminal() { cli::Format::Table } else { cli::Format::Jsonl });
    let text = match format {
        cli::Format::Table => agentgate::summary::table_fitting(&runs, table_width()),
        cli::Format::Csv => agentgate::summary::csv(&runs),
        cli::Format::Jsonl => {
            let mut out: String = runs.iter().map(|r| format!("{}\n", r.to_json())).collect();
            if totals {
                out.push_str(&format!("{}\n", agentgate::summary::totals(&runs)));
            }
            out
        }
    };
    match write_out(text.as_bytes()) {
        status::OK if strict && unreadable => status::DATA,
        code => code,
    }
}

pub(crate) fn run(args: &Translate) -> u8 {
    let to: Dialect = match args.to.as_deref().map(str::parse) {
        Some(Ok(d)) => d,
        // clap has already checked the name against the same list.
        _ => return 2,
    };
    let from = match args.from.as_str() {
        "auto" => None,
        name => name.parse().ok(),
    };
    warn_unused(to, "--to", args.json_deltas, args.include_partial_messages);
    let mut opts = Options::new(from, to);
    opts.strict = args.strict;
    opts.max_line_bytes = args.max_line_bytes;
    opts.encode.json_deltas = args.json_deltas;
    opts.encode.include_partial_messages = args.include_partial_messages;
    opts.encode.otlp_semconv = semconv(&args.otlp_semconv);
    opts.encode.otlp_tool_content = args.otlp_tool_content;
    if to != Dialect::Otlp && (args.otlp_tool_content || args.otlp_semconv != "released") {
        eprintln!(
            "agentgate: warning: --otlp-semconv and --otlp-tool-content do nothing with --to {to} (they are otlp's)"
        );
    }
    // A target that needs a time the source lacks writes this one (reproducible builds' rule).
    opts.encode.source_date_epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|v| v.trim().parse().ok());

    let files = if args.files.is_empty() { vec![PathBuf::from("-")] } else { args.files.clone() };
    hint_if_terminal(&files);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut code = status::OK;
    for path in &files {
        let name = display(path);
        let input = match open(path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("agentgate: {name}: cannot open: {e}");
                code = code.max(status::NO_INPUT);
                continue;
            }
        };
        let mut diag = |d: agentgate::Diagnostic| eprintln!("agentgate: {}", d.line_for(&name));
        let summary = match translate(input, &mut out, &opts, &mut diag) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return status::OK,
            Err(e) => {
                eprintln!("agentgate: cannot write the output: {e}");
                return status::IO;
            }
        };
        if args.report {
            let from = summary.source.map_or("unknown", Dialect::name);
            eprintln!("agentgate: {name}: report ({from} to {to}): {}", summary.report);
        }
        match summary.stopped {
            None => {}
            Some(Stop::Strict(_) | Stop::Fatal(_) | Stop::Undetected(_)) => code = code.max(status::DATA),
            Some(Stop::Read(_)) => code = code.max(status::IO),
        }
        if args.strict && code == status::DATA {
            break;
        }
    }
    code
}
