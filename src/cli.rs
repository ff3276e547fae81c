//! The command line, defined once: `--help` and the usage errors come from here.

use std::path::{Path, PathBuf};

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand};

use agentgate::io::framing::DEFAULT_MAX_LINE_BYTES;
use agentgate::Dialect;

#[derive(Parser, Debug)]
#[command(
    name = "agentgate",
    version,
    about = "Translate the JSON Lines event streams of AI coding agents from one agent's dialect into another's",
    long_about = "Translate the JSON Lines event streams of AI coding agents from one agent's dialect into another's.\n\n\
        Reads each FILE (or standard input) as one run, line by line, and writes it in the --to dialect as it goes. \
        Every run's output ends with exactly one terminal record, also when the input stops early. \
        Bad lines are reported on stderr as FILE:LINE and skipped; a line with bytes that are not UTF-8 is reported and read with U+FFFD in their place.",
    after_help = "Examples:\n  agentgate --to localcode examples/adal-lint-fix.jsonl\n  adal -q \"fix the lint errors\" -o stream-json | agentgate --to localcode | tail -1 | jq .\n  agentgate detect run.jsonl\n\n\
        Exit status: 0 translated (whatever the run's outcome), 2 usage error, 65 bad or refused input (with --strict, an undetectable dialect or an unknown format version), 66 an input file cannot be opened, 69 runs whose telemetry could not be delivered (--otlp-endpoint; kept in --otlp-spool), 74 an I/O error.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub translate: Translate,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the dialect of a stream; it never guesses: exit 1, with the reason, when its lines do not fit one dialect's contract alone
    Detect {
        /// The streams; standard input when none, or -. With several, each line is FILE: dialect
        files: Vec<PathBuf>,
    },
    /// List the dialects with a one-line description each
    Dialects {
        /// Print every dialect's contract (kinds, fields, limits, outcome table) as Markdown
        #[arg(long)]
        markdown: bool,
    },
    /// Run an agent and speak for it in another agent's dialect: its stdout translated, its exit
    /// status and signals as the target agent's
    #[cfg(unix)]
    Exec {
        /// The dialect to speak
        #[arg(short = 't', long = "as", value_name = "DIALECT", value_parser = to_values())]
        to: String,
        /// The agent's dialect; auto detects it from its first lines
        #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values())]
        from: String,
        /// Stop the agent after this long (30s, 500ms, 2m, 1h; 0: no limit): SIGTERM, then SIGKILL
        /// after --kill-after
        #[arg(long, value_name = "DURATION")]
        timeout: Option<String>,
        /// Grace period between SIGTERM and SIGKILL on a timeout, or once the output's reader is
        /// gone
        #[arg(long, value_name = "DURATION", default_value = "5s")]
        kill_after: String,
        /// Keep the agent's own stream, as it wrote it, in FILE (beside the translation on stdout)
        #[arg(long, value_name = "FILE")]
        tee: Option<PathBuf>,
        /// base-context: write the --json-deltas form
        #[arg(long)]
        json_deltas: bool,
        /// claude-code: write stream_event partials ahead of each assistant line (Claude's own
        /// flag, as the Agent SDK passes it)
        #[arg(long)]
        include_partial_messages: bool,
        /// otlp: the metric names of the released GenAI conventions, or the GenAI repository's latest
        #[arg(long, value_name = "VERSION", default_value = "released", value_parser = ["released", "latest"])]
        otlp_semconv: String,
        /// otlp: put each tool call's arguments and result on its span
        #[arg(long)]
        otlp_tool_content: bool,
        /// --from acp: the prompt sent to the ACP agent (else the stream-json handshake's user
        /// message, else agentgate's stdin to its end)
        #[arg(long, value_name = "TEXT")]
        prompt: Option<String>,
        /// --from acp: how the agent's permission requests are answered: deny (a reject_once
        /// that does not end the turn), allow (allow_once), ask-never (the turn is cancelled and
        /// the run ends permission_denied, as a headless agent's)
        #[arg(long, value_name = "POLICY", default_value = "deny", value_parser = ["deny", "allow", "ask-never"])]
        permission: String,
        /// claude-code: stream-json reads Claude's stdin protocol (as the Agent SDK's client
        /// writes it): control requests are answered, and the user message's text goes to the
        /// agent as its dialect takes a prompt (with --from: localcode --goal, adal -q, gemini
        /// -p, base-context, codex and claude-code an argument), else on its stdin
        #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "stream-json"])]
        input_format: String,
        /// Claude's --output-format and --verbose, accepted for a command line written for Claude
        /// Code (the output is the --as dialect's)
        #[arg(long, value_name = "FORMAT", hide = true)]
        output_format: Option<String>,
        #[arg(long, hide = true)]
        verbose: bool,
        #[command(flatten)]
        export: OtlpFlags,
        #[command(flatten)]
        claude: ClaudeFlags,
        /// The agent's command and its arguments, after --
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Serve an agent as an Agent Client Protocol agent (v1, JSON-RPC on stdin and stdout) for
    /// ACP editors: each session/prompt runs CMD once, its stream sent as session updates
    /// (docs/acp.md)
    #[cfg(unix)]
    Acp {
        /// The agent's dialect; auto detects it from each run's first lines
        #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values())]
        from: String,
        /// Stop a run after this long (30s, 500ms, 2m, 1h; 0: no limit): SIGTERM, SIGKILL after
        /// --kill-after; its prompt is answered with error -32800
        #[arg(long, value_name = "DURATION")]
        timeout: Option<String>,
        /// Grace period between SIGTERM and SIGKILL
        #[arg(long, value_name = "DURATION", default_value = "5s")]
        kill_after: String,
        /// After session/cancel's SIGINT, how long the agent has to stop before SIGTERM
        #[arg(long, value_name = "DURATION", default_value = "2s")]
        cancel_grace: String,
        /// deny: the agent's own approval policy decides; allow: every run gets the --from
        /// contract's approve-all arguments (adal --yolo)
        #[arg(long, value_name = "POLICY", default_value = "deny", value_parser = ["deny", "allow"])]
        permission: String,
        /// The model's context window in tokens: usage_update reports the last request's
        /// tokens against it (without it, a window the source states, as Claude's result does)
        #[arg(long, value_name = "TOKENS")]
        context_window: Option<u64>,
        /// Longest line accepted, from the client or the agent, in bytes
        #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
        max_line_bytes: usize,
        /// The agent's command and its arguments, after --; an argument holding {prompt} gets
        /// the prompt (else it goes where the --from contract says, else on the agent's stdin)
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Show a run of any dialect for a person: one line per step (turns, the model's text
    /// wrapped, tool calls and how they ended, errors, tokens and cost per turn, the outcome)
    View {
        /// The run's dialect; auto detects it from its first lines
        #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values())]
        from: String,
        /// Keep reading as the file grows (as tail -f does), until the run's end is shown
        #[arg(long)]
        follow: bool,
        /// Colour: auto (on a terminal, unless NO_COLOR is set), always or never
        #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "always", "never"])]
        color: String,
        /// The run; standard input when none or -
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Print a completion script for a shell: `agentgate completions bash > /etc/bash_completion.d/agentgate`
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff) on stdout: `agentgate man | man -l -`, `agentgate man exec`
    Man {
        /// The subcommand whose page to print (agentgate-exec(1)); agentgate(1) when none
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
    /// Summarize runs whatever their dialects: one JSON line per run, or a table or CSV
    Summary {
        /// The runs' dialect; auto detects it per file
        #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values())]
        from: String,
        /// Keep the whole final text (else it is cut to 200 characters)
        #[arg(long)]
        full: bool,
        /// Add totals across the runs: one last JSON object, or a CSV row (a table always has
        /// them)
        #[arg(long)]
        totals: bool,
        /// Output format; a table when stdout is a terminal, JSON Lines otherwise
        #[arg(long, value_enum)]
        format: Option<Format>,
        /// Only the runs that meet this condition (each one, when given again): FIELD=VALUE,
        /// FIELD!=VALUE, FIELD<N, FIELD<=N, FIELD>N, FIELD>=N, where FIELD is a column's name or
        /// model, reason, error, session_id, duration_ms (outcome!=completed, cost_usd>0.5)
        #[arg(long = "where", value_name = "CONDITION", value_parser = filter)]
        conditions: Vec<agentgate::summary::Filter>,
        /// The runs in the order of this figure (a column's name, or a --where FIELD), least
        /// first; runs without it last
        #[arg(long, value_name = "FIELD")]
        sort: Option<String>,
        /// With --sort: greatest first
        #[arg(short, long, requires = "sort")]
        reverse: bool,
        /// One row (or JSON object) per dialect, model or outcome, with its runs' figures summed
        #[arg(long, value_name = "WHAT", value_parser = ["dialect", "model", "outcome"])]
        group_by: Option<String>,
        /// The table's and the CSV's columns after the file, in order, comma-separated: file,
        /// dialect, outcome, exit_status, turns, rounds, tool_calls, tool_failed, input,
        /// cache_read, cache_write, output, cost_usd, problems, final_text
        #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = column)]
        columns: Option<Vec<usize>>,
        /// Exit 65 when a file cannot be read or its dialect told
        #[arg(long)]
        strict: bool,
        /// otlp: when a run ended, for a source that states no times (as for translation); else
        /// each file's modification time
        #[arg(long, value_name = "TIME", value_parser = otlp_time)]
        otlp_time: Option<u64>,
        #[command(flatten)]
        export: OtlpFlags,
        /// Files, - for standard input, or directories searched for *.jsonl and *.ndjson;
        /// standard input when none
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Send files of OTLP/JSON (an --otlp-spool folder, or --to otlp output) to an OTLP/HTTP
    /// receiver, one request a line; what was accepted is removed. Exit 69 when some could not be
    /// delivered (their lines stay)
    Export {
        #[command(flatten)]
        export: OtlpFlags,
        /// Folders (their *.jsonl and *.json) or files
        #[arg(value_name = "PATH", required = true)]
        paths: Vec<PathBuf>,
    },
    /// Check streams against their dialect's contract (agentgate dialects --markdown): one line per problem,
    /// FILE:LINE: what is wrong; exit 0 when valid, 1 when not
    Validate {
        /// The streams' dialect; auto detects it per file (--dialect/-d: the same, its older name)
        #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values(),
              alias = "dialect", short_alias = 'd')]
        from: String,
        /// Report warnings too: departures from what the agent writes that no reader relies on
        #[arg(long)]
        warnings: bool,
        /// Warnings count as problems (reported, and exit 1)
        #[arg(long)]
        strict: bool,
        /// text: FILE:LINE: message; json: one object per finding (file, line, severity, rule, message)
        #[arg(long, value_enum, default_value = "text")]
        format: FindingFormat,
        /// Files, - for standard input, or directories searched for *.jsonl and *.ndjson;
        /// standard input when none
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
}

/// The flags the Claude Agent SDK's client gives the `claude` it starts
/// (`subprocess_cli.py`), accepted and ignored, so that a two-line wrapper running
/// `agentgate exec --as claude-code "$@" -- AGENT` can be its `cli_path`: the agent behind it
/// has its own model, tools and settings. (`--include-partial-messages`, `--input-format`,
/// `--output-format` and `--verbose` are read; see `exec`.)
#[derive(Args, Debug, Default)]
pub struct ClaudeFlags {
    /// Claude's options that take a value, each accepted (any number of times) and ignored.
    #[arg(
        long = "system-prompt",
        hide = true,
        allow_hyphen_values = true,
        value_name = "V",
        action = clap::ArgAction::Append,
        aliases = [
            "system-prompt-file", "append-system-prompt", "tools", "allowedTools", "disallowedTools",
            "max-turns", "max-budget-usd", "task-budget", "model", "fallback-model", "betas",
            "permission-prompt-tool", "permission-mode", "resume", "session-id", "settings", "add-dir",
            "mcp-config", "resume-session-at", "resume-drops-turn", "setting-sources", "plugin-dir",
            "thinking", "thinking-display", "max-thinking-tokens", "effort", "json-schema",
        ]
    )]
    pub ignored_values: Vec<String>,
    /// Claude's switches, accepted and ignored.
    #[arg(
        long = "continue",
        hide = true,
        action = clap::ArgAction::Count,
        aliases = ["include-hook-events", "strict-mcp-config", "fork-session", "session-mirror"]
    )]
    pub ignored_switches: u8,
}

#[derive(Args, Debug)]
pub struct Translate {
    /// The input's dialect; auto detects it from the first lines
    #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values())]
    pub from: String,

    /// The dialect to write (otlp: the run as OpenTelemetry traces and metrics, docs/otlp.md)
    #[arg(short, long, value_name = "DIALECT", required = true, value_parser = to_values())]
    pub to: Option<String>,

    /// base-context: write the --json-deltas form (messageId and deltas, no message snapshots)
    #[arg(long)]
    pub json_deltas: bool,

    /// claude-code: write stream_event partials ahead of each assistant line, as Claude Code's
    /// --include-partial-messages does
    #[arg(long)]
    pub include_partial_messages: bool,

    /// otlp: the metric names of the released GenAI conventions, or the GenAI repository's latest
    #[arg(long, value_name = "VERSION", default_value = "released", value_parser = ["released", "latest"])]
    pub otlp_semconv: String,

    /// otlp: put each tool call's arguments and result on its span (they can hold private code and paths)
    #[arg(long)]
    pub otlp_tool_content: bool,

    /// otlp: when the run ended, for a source that states no times (seconds since the Unix
    /// epoch, or RFC 3339 such as 2026-03-16T10:12:03Z); else SOURCE_DATE_EPOCH, else the file's
    /// modification time (a pipe: each line's arrival)
    #[arg(long, value_name = "TIME", value_parser = otlp_time)]
    pub otlp_time: Option<u64>,

    /// Print on stderr, per run, what happened to every input line and what the target could not carry
    #[arg(long)]
    pub report: bool,

    /// Make the first bad line fatal: the terminal record is written, then exit 65
    #[arg(long)]
    pub strict: bool,

    /// Longest input line accepted, in bytes; longer lines are reported and skipped
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,

    #[command(flatten)]
    pub export: OtlpFlags,

    /// Write each run to a file of its own under DIR, its path mirroring the input's (a
    /// folder's tree kept; a file by its name), rather than all of them to stdout
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,

    /// Input streams, each one run, translated in order; standard input when none or -; a
    /// folder: its *.jsonl and *.ndjson files, in sorted order
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Sending runs' telemetry to an OTLP/HTTP receiver (docs/otlp.md, "Sending it"). Each flag
/// over its standard variable.
#[derive(Args, Debug, Default, Clone)]
pub struct OtlpFlags {
    /// Send each run's telemetry (OTLP/HTTP, to URL/v1/traces and URL/v1/metrics) to this
    /// receiver; `none` sends nothing [env: OTEL_EXPORTER_OTLP_ENDPOINT, or
    /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and _METRICS_ENDPOINT used as they are]
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// The wire form [env: OTEL_EXPORTER_OTLP_PROTOCOL; default http/protobuf]
    #[arg(long, value_name = "PROTOCOL", value_parser = ["http/protobuf", "http/json"])]
    pub otlp_protocol: Option<String>,
    /// A header on every request, as many times as needed (an API key) [env:
    /// OTEL_EXPORTER_OTLP_HEADERS, key=value,key=value]
    #[arg(long = "otlp-header", value_name = "KEY=VALUE")]
    pub otlp_headers: Vec<String>,
    /// Compress request bodies [env: OTEL_EXPORTER_OTLP_COMPRESSION; default none]
    #[arg(long, value_name = "ALGORITHM", value_parser = ["gzip", "none"])]
    pub otlp_compression: Option<String>,
    /// How long one request may take (10s, 500ms) [env: OTEL_EXPORTER_OTLP_TIMEOUT, in
    /// milliseconds; default 10s]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub otlp_timeout: Option<std::time::Duration>,
    /// Write each batch that could not be delivered into DIR as a file of OTLP/JSON (what the
    /// Collector's otlpjsonfile receiver reads, and `agentgate export` sends later); agentgate
    /// then exits 69
    #[arg(long, value_name = "DIR")]
    pub otlp_spool: Option<PathBuf>,
}

/// A duration as `--otlp-timeout` takes it: a number and a unit (ms, s, m).
fn duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 =
        n.parse().map_err(|_| format!("{} is not a duration (10s, 500ms, 1m)", agentgate::error::quoted(s)))?;
    match unit {
        "ms" => Ok(std::time::Duration::from_millis(n)),
        "s" | "" => Ok(std::time::Duration::from_secs(n)),
        "m" => Ok(std::time::Duration::from_secs(n * 60)),
        _ => Err(format!("{} is not a duration (10s, 500ms, 1m)", agentgate::error::quoted(s))),
    }
}

/// A `summary --where` condition.
fn filter(s: &str) -> Result<agentgate::summary::Filter, String> {
    s.parse()
}

/// A `summary --columns` name: the CSV's, or the table's shorter header.
fn column(s: &str) -> Result<usize, String> {
    agentgate::summary::column(s.trim()).ok_or_else(|| {
        format!(
            "no column is called {} (columns: {})",
            agentgate::error::quoted(s),
            agentgate::summary::COLUMNS.join(", ")
        )
    })
}

/// How `summary` writes its runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Table,
    Csv,
}

/// How `validate` writes what it found.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingFormat {
    Text,
    Json,
}

/// `--otlp-time`: seconds since the epoch or an RFC 3339 UTC time, in nanoseconds.
fn otlp_time(s: &str) -> Result<u64, String> {
    agentgate::dialect::otlp::parse_time(s).ok_or_else(|| {
        "not a time: give seconds since the Unix epoch or an RFC 3339 UTC time (2026-03-16T10:12:03Z)".into()
    })
}

fn to_values() -> PossibleValuesParser {
    PossibleValuesParser::new(Dialect::target_names())
}

fn from_values() -> PossibleValuesParser {
    let mut names = vec!["auto"];
    names.extend(Dialect::source_names());
    PossibleValuesParser::new(names)
}

/// A first word that is no file but nearly a command's name (`agentgate sumary runs/`) is
/// a typo, not an input: say which command was meant (exit 2) rather than ask for `--to`.
/// The tip for a command line that gives `exec` or `acp` an agent's command without `--`
/// before it (clap then takes the command for an argument of ours).
pub fn dashdash_tip() -> Option<String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let at = args.iter().position(|a| a == "exec" || a == "acp")?;
    if args.iter().any(|a| a == "--") {
        return None;
    }
    Some(format!("tip: the agent's command goes after --: agentgate {} [OPTIONS] -- CMD [ARG]...", args[at]))
}

pub fn mistyped_command() -> Option<u8> {
    use clap::CommandFactory;
    let word = std::env::args().nth(1)?;
    if word.starts_with('-') || Path::new(&word).exists() {
        return None;
    }
    let cli = Cli::command();
    let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
    if names.contains(&word.as_str()) {
        return None;
    }
    // One edit in a short name, two in a longer one: a typo, not another word.
    let near = names
        .iter()
        .copied()
        .filter(|n| distance(&word, n) <= (n.len() / 3).clamp(1, 2))
        .min_by_key(|n| distance(&word, n))?;
    eprintln!("agentgate: unknown command '{word}'; did you mean '{near}'? (see agentgate --help)");
    Some(2)
}

/// The edit distance between two short words (Levenshtein).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
