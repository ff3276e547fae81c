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
use agentgate::{Dialect, Options};

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
#[allow(clippy::too_many_arguments)]
pub(crate) fn exec_command(
    to: &str,
    from: &str,
    timeout: Option<&str>,
    kill_after: &str,
    encode: EncodeOptions,
    stream_input: bool,
    export: &cli::OtlpFlags,
    prompt: Option<String>,
    permission: &str,
    tee: Option<PathBuf>,
    command: &[String],
) -> u8 {
    let export = match crate::export::Config::from_flags(export) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("agentgate: {e}");
            return 2;
        }
    };
    let parse = |s: &str| {
        exec::parse_duration(s).map_err(|e| {
            eprintln!("agentgate: {e}");
        })
    };
    let Ok(kill_after) = parse(kill_after) else { return 2 };
    let timeout = match timeout.map(parse).transpose() {
        // 0 is no limit, as GNU timeout takes it.
        Ok(t) => t.filter(|t| !t.is_zero()),
        Err(()) => return 2,
    };
    let Ok(to) = to.parse() else { return 2 };
    warn_unused(to, "--as", encode.json_deltas, encode.include_partial_messages);
    let from: Option<Dialect> = from.parse().ok();
    if from != Some(Dialect::Acp) && (prompt.is_some() || permission != "deny") {
        eprintln!("agentgate: --prompt and --permission are for an ACP agent (--from acp); ignored");
    }
    if from == Some(Dialect::Acp) && tee.is_some() {
        eprintln!("agentgate: --tee keeps a stream of lines, and an ACP agent speaks JSON-RPC; ignored");
    }
    let exec = exec::Exec { to, from, timeout, kill_after, encode, stream_input, export, tee, command };
    if from == Some(Dialect::Acp) {
        return crate::acp::client::run(&exec, crate::acp::client::Policy::parse(permission), prompt);
    }
    exec.run()
}

#[cfg(unix)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn acp_command(
    from: &str,
    timeout: Option<&str>,
    kill_after: &str,
    cancel_grace: &str,
    allow: bool,
    context_window: Option<u64>,
    max_line_bytes: usize,
    command: Vec<String>,
) -> u8 {
    let parse = |s: &str| {
        exec::parse_duration(s).map_err(|e| {
            eprintln!("agentgate: {e}");
        })
    };
    let (Ok(kill_after), Ok(cancel_grace)) = (parse(kill_after), parse(cancel_grace)) else { return 2 };
    let timeout = match timeout.map(parse).transpose() {
        // 0 is no limit, as for exec (and GNU timeout).
        Ok(t) => t.filter(|t| !t.is_zero()),
        Err(()) => return 2,
    };
    let from: Option<Dialect> = from.parse().ok();
    if from == Some(Dialect::Acp) {
        eprintln!("agentgate: acp serves a CLI agent; an ACP agent needs no translation to ACP");
        return 2;
    }
    // --permission allow goes through the agent's own approve-all flags, never around them.
    if allow && from.and_then(|d| d.contract().approval.as_ref()).is_none() {
        let with: Vec<&str> = Dialect::all().filter(|d| d.contract().approval.is_some()).map(Dialect::name).collect();
        eprintln!(
            "agentgate: --permission allow needs --from naming a dialect whose contract says how to approve every call ({})",
            with.join(", ")
        );
        return 2;
    }
    crate::acp::serve(crate::acp::Config {
        from,
        timeout,
        kill_after,
        cancel_grace,
        allow,
        context_window,
        max_line_bytes,
        command,
    })
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

/// Where an otlp run's times come from when its source states none (docs/otlp.md, "Time"):
/// `--otlp-time`, else `SOURCE_DATE_EPOCH` (already in `encode`), else the file's modification
/// time as the run's end; a pipe or terminal has none, and each line's arrival is its time.
pub(crate) fn run_times(encode: &mut agentgate::EncodeOptions, path: &Path, otlp_time: Option<u64>) {
    encode.run_end_ns = otlp_time;
    encode.live_times = false;
    if otlp_time.is_some() || encode.source_date_epoch.is_some() {
        return;
    }
    // Standard input is read for its file where it is one (`< run.jsonl`).
    let file = if path == Path::new("-") { Path::new("/dev/stdin") } else { path };
    match std::fs::metadata(file) {
        Ok(m) if m.is_file() => {
            encode.run_end_ns = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| u64::try_from(d.as_nanos()).ok());
        }
        _ => encode.live_times = path == Path::new("-"),
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

/// What `summary` writes of its runs beside their figures: which runs, in what order, grouped
/// how, which columns, totals.
pub(crate) struct Shape {
    pub totals: bool,
    pub conditions: Vec<agentgate::summary::Filter>,
    pub sort: Option<String>,
    pub reverse: bool,
    pub group_by: Option<agentgate::summary::GroupBy>,
    pub columns: Option<Vec<usize>>,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn summary_command(
    from: &str,
    full: bool,
    format: Option<cli::Format>,
    shape: &Shape,
    strict: bool,
    otlp_time: Option<u64>,
    export: &cli::OtlpFlags,
    paths: &[PathBuf],
) -> u8 {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{mpsc, Mutex};

    use agentgate::summary::{summarize_beside, RunSummary};

    let export = match crate::export::Config::from_flags(export) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("agentgate: {e}");
            return 2;
        }
    };
    if let Some(Err(e)) = shape.sort.as_deref().map(|f| agentgate::summary::sort(&mut [], f, false)) {
        eprintln!("agentgate: --sort: {e}");
        return 2;
    }
    let from: Option<Dialect> = from.parse().ok();
    // No PATH: the run on standard input, as the other commands read it.
    let files = if paths.is_empty() { vec![PathBuf::from("-")] } else { collect(paths) };
    hint_if_terminal(&files);
    let source_date_epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|v| v.trim().parse().ok());
    let exporting = export.is_some();
    let summarize_one = |path: &PathBuf| -> (RunSummary, Option<agentgate::dialect::otlp::Telemetry>) {
        let name = display(path);
        // The run's telemetry from the same pass, when it is sent.
        let mut encode = agentgate::EncodeOptions::default();
        encode.source_date_epoch = source_date_epoch;
        run_times(&mut encode, path, otlp_time);
        match open(path) {
            Ok(input) => summarize_beside(input, &name, from, full, exporting.then_some(&encode)),
            Err(e) => {
                (RunSummary { file: name, problems: vec![format!("cannot open: {e}")], ..RunSummary::default() }, None)
            }
        }
    };
    // Files are summarized in parallel; the output keeps the sorted order. Their telemetry goes
    // to the exporter on this thread as each is done.
    let slots: Vec<Mutex<Option<RunSummary>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let (sent, received) = mpsc::channel();
    let mut exporter = export.map(|c| crate::export::Exporter::new(c, files.len()));
    let progress = files.len() > 1 && std::io::stderr().is_terminal() && exporter.is_none();
    let started = std::time::Instant::now();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let sent = sent.clone();
            let (next, done, files, slots, summarize_one) = (&next, &done, &files, &slots, &summarize_one);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let (s, telemetry) = summarize_one(path);
                let readable = s.dialect.is_some();
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
                let _ = sent.send((readable, telemetry));
                done.fetch_add(1, Ordering::Relaxed);
            });
        }
        drop(sent);
        if let Some(e) = &mut exporter {
            for (readable, telemetry) in received.iter() {
                match telemetry {
                    Some(t) => e.add(t),
                    // A file that is no run has no telemetry to lose.
                    None if !readable => {}
                    None => e.add_missing(),
                }
            }
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
    let mut runs: Vec<RunSummary> =
        slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).unwrap_or_default()).collect();
    let mut unreadable = false;
    for r in &runs {
        if r.dialect.is_none() {
            unreadable = true;
            let why = r.problems.first().map_or("not a known dialect", String::as_str);
            eprintln!("agentgate: {}", agentgate::error::one_line(&format!("{}: {why}", r.file)));
        }
    }
    // The runs asked for (each file was still read, and its problems said), in the order asked.
    runs.retain(|r| shape.conditions.iter().all(|c| c.holds(r)));
    if let Some(field) = &shape.sort {
        let _ = agentgate::summary::sort(&mut runs, field, shape.reverse);
    }
    let format =
        format.unwrap_or(if std::io::stdout().is_terminal() { cli::Format::Table } else { cli::Format::Jsonl });
    let table = agentgate::summary::TableOptions {
        columns: shape.columns.clone(),
        totals: shape.totals,
        group_by: shape.group_by,
    };
    let text = match format {
        cli::Format::Table => agentgate::summary::table_fitting(&runs, table_width(), &table),
        cli::Format::Csv => agentgate::summary::csv_with(&runs, &table),
        cli::Format::Jsonl => {
            let mut out: String = match shape.group_by {
                Some(by) => agentgate::summary::group_totals(&runs, by).iter().map(|g| format!("{g}\n")).collect(),
                None => runs.iter().map(|r| format!("{}\n", r.to_json())).collect(),
            };
            if shape.totals {
                out.push_str(&format!("{}\n", agentgate::summary::totals(&runs)));
            }
            out
        }
    };
    let code = match write_out(text.as_bytes()) {
        status::OK if strict && unreadable => status::DATA,
        code => code,
    };
    match exporter.map(|e| e.finish().status()) {
        Some(status::OK) | None => code,
        Some(unavailable) => code.max(unavailable),
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
    let export = match crate::export::Config::from_flags(&args.export) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("agentgate: {e}");
            return 2;
        }
    };
    let mut opts = Options::new(from, to);
    opts.strict = args.strict;
    opts.max_line_bytes = args.max_line_bytes;
    opts.encode.json_deltas = args.json_deltas;
    opts.encode.include_partial_messages = args.include_partial_messages;
    opts.encode.otlp_semconv = semconv(&args.otlp_semconv);
    opts.encode.otlp_tool_content = args.otlp_tool_content;
    if to != Dialect::Otlp
        && export.is_none()
        && (args.otlp_tool_content || args.otlp_semconv != "released" || args.otlp_time.is_some())
    {
        eprintln!(
            "agentgate: warning: --otlp-semconv, --otlp-tool-content and --otlp-time do nothing with --to {to} and no --otlp-endpoint (they are otlp's)"
        );
    }
    // A target that needs a time the source lacks writes this one (reproducible builds' rule).
    opts.encode.source_date_epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|v| v.trim().parse().ok());

    let given = if args.files.is_empty() { vec![PathBuf::from("-")] } else { args.files.clone() };
    hint_if_terminal(&given);
    // Each run with where it goes: stdout, or under --out-dir the path that mirrors its input's.
    let mut files: Vec<PathBuf> = Vec::new();
    let mut targets: Vec<Option<PathBuf>> = Vec::new();
    for p in &given {
        for f in collect(std::slice::from_ref(p)) {
            let under = match &args.out_dir {
                None => None,
                Some(dir) if p.is_dir() => Some(dir.join(f.strip_prefix(p).unwrap_or(&f))),
                Some(dir) if p == Path::new("-") => Some(dir.join("stdin.jsonl")),
                Some(dir) => Some(dir.join(f.file_name().map_or_else(|| f.clone().into_os_string(), |n| n.into()))),
            };
            files.push(f);
            targets.push(under);
        }
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut code = status::OK;
    let mut exporter = export.map(|c| crate::export::Exporter::new(c, files.len()));
    for (path, target) in files.iter().zip(&targets) {
        let name = display(path);
        if to == Dialect::Otlp || exporter.is_some() {
            run_times(&mut opts.encode, path, args.otlp_time);
        }
        let input = match open(path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("agentgate: {name}: cannot open: {e}");
                code = code.max(status::NO_INPUT);
                continue;
            }
        };
        let mut diag = |d: agentgate::Diagnostic| eprintln!("agentgate: {}", d.line_for(&name));
        // With an endpoint the run's telemetry is kept to be sent: instead of the otlp lines, or
        // beside another dialect's.
        let kept = agentgate::dialect::otlp::Kept::default();
        let encoder: Box<dyn agentgate::codec::Encode> = match (&exporter, to) {
            (None, _) => to.encoder(&opts.encode),
            (Some(_), Dialect::Otlp) => {
                Box::new(agentgate::dialect::otlp::Encoder::keeping(&opts.encode, kept.clone()))
            }
            (Some(_), _) => {
                Box::new(agentgate::dialect::otlp::Beside::new(to.encoder(&opts.encode), &opts.encode, kept.clone()))
            }
        };
        let result = match target {
            None => agentgate::pipeline::translate_with(input, &mut out, &opts, encoder, &mut diag),
            Some(target) => {
                let made = target.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| File::create(target));
                let mut file = match made {
                    Ok(f) => io::BufWriter::new(f),
                    Err(e) => {
                        eprintln!("agentgate: {}: cannot create: {e}", display(target));
                        code = code.max(status::IO);
                        continue;
                    }
                };
                let result = agentgate::pipeline::translate_with(input, &mut file, &opts, encoder, &mut diag);
                match (result, file.flush()) {
                    (Ok(s), Ok(())) => Ok(s),
                    (Err(e), _) | (_, Err(e)) => {
                        eprintln!("agentgate: {}: cannot write: {e}", display(target));
                        code = code.max(status::IO);
                        continue;
                    }
                }
            }
        };
        if let Some(e) = &mut exporter {
            match kept.borrow_mut().pop() {
                Some(t) => e.add(t),
                None => e.add_missing(),
            }
        }
        let summary = match result {
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
    match exporter.map(|e| e.finish().status()) {
        Some(status::OK) | None => code,
        Some(unavailable) => code.max(unavailable),
    }
}

/// `agentgate view`: the run at `path` shown for a person ([`agentgate::view`]).
pub(crate) fn view_command(from: &str, follow: bool, color: &str, path: &Path) -> u8 {
    use agentgate::view::{Style, Viewer};
    let from: Option<Dialect> = from.parse().ok();
    // NO_COLOR (no-color.org): set and not empty, no colour unless asked for by name.
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let style = match color {
        "always" => Style::Color,
        "never" => Style::Plain,
        _ if io::stdout().is_terminal() && !no_color => Style::Color,
        _ => Style::Plain,
    };
    let viewer = Viewer::new(style, table_width().unwrap_or(80));
    let done = viewer.done();
    let name = display(path);
    hint_if_terminal(&[path.to_path_buf()]);
    let input: Box<dyn io::Read> = if path == Path::new("-") {
        Box::new(io::stdin())
    } else {
        match File::open(path) {
            Ok(f) if follow => Box::new(Follow { file: f, done }),
            Ok(f) => Box::new(io::BufReader::with_capacity(1 << 16, f)),
            Err(e) => {
                eprintln!("agentgate: {name}: cannot open: {e}");
                return status::NO_INPUT;
            }
        }
    };
    // otlp is never a source: every line is shown, none copied as it was read.
    let opts = Options::new(from, Dialect::Otlp);
    let mut diag = |d: agentgate::Diagnostic| eprintln!("agentgate: {}", d.line_for(&name));
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match agentgate::pipeline::translate_with(input, &mut out, &opts, Box::new(viewer), &mut diag) {
        Ok(s) if matches!(s.stopped, Some(Stop::Read(_))) => status::IO,
        Ok(_) => status::OK,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status::OK,
        Err(e) => {
            eprintln!("agentgate: cannot write the output: {e}");
            status::IO
        }
    }
}

/// A file read as it grows (`view --follow`): at its end, read again a moment later, until the
/// run's end has been shown.
struct Follow {
    file: File,
    done: std::rc::Rc<std::cell::Cell<bool>>,
}

impl io::Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.file.read(buf)?;
            if n > 0 || self.done.get() {
                return Ok(n);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}
