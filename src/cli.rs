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
        Exit status: 0 translated (whatever the run's outcome), 2 usage error, 65 bad or refused input (with --strict, an undetectable dialect or an unknown format version), 66 an input file cannot be opened, 74 an I/O error.",
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
    /// Print the dialect of a stream (exit 1, with the reason, when it cannot be told)
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
        /// Stop the agent after this long (30s, 500ms, 2m, 1h): SIGTERM, then SIGKILL after --kill-after
        #[arg(long, value_name = "DURATION")]
        timeout: Option<String>,
        /// Grace period between SIGTERM and SIGKILL on a timeout
        #[arg(long, value_name = "DURATION", default_value = "5s")]
        kill_after: String,
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
        /// claude-code: stream-json reads Claude's stdin protocol (as the Agent SDK's client
        /// writes it): control requests are answered, and the user message's text goes to the
        /// agent as its dialect takes a prompt (with --from: localcode --goal, adal -q,
        /// base-context, codex and claude-code an argument), else on its stdin
        #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "stream-json"])]
        input_format: String,
        /// Claude's --output-format and --verbose, accepted for a command line written for Claude
        /// Code (the output is the --as dialect's)
        #[arg(long, value_name = "FORMAT", hide = true)]
        output_format: Option<String>,
        #[arg(long, hide = true)]
        verbose: bool,
        #[command(flatten)]
        claude: ClaudeFlags,
        /// The agent's command and its arguments, after --
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Print a completion script for a shell: `agentgate completions bash > /etc/bash_completion.d/agentgate`
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on stdout: `agentgate man | man -l -`
    Man,
    /// Summarize runs whatever their dialects: one JSON line per run, or a table or CSV
    Summary {
        /// The runs' dialect; auto detects it per file
        #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values())]
        from: String,
        /// Keep the whole final text (else it is cut to 200 characters)
        #[arg(long)]
        full: bool,
        /// Add one last object with totals across the runs
        #[arg(long)]
        totals: bool,
        /// Output format; a table when stdout is a terminal, JSON Lines otherwise
        #[arg(long, value_enum)]
        format: Option<Format>,
        /// Exit 65 when a file cannot be read or its dialect told
        #[arg(long)]
        strict: bool,
        /// Files, - for standard input, or directories searched for *.jsonl and *.ndjson;
        /// standard input when none
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Check streams against their dialect's contract in mappings/: one line per problem,
    /// FILE:LINE: what is wrong; exit 0 when valid, 1 when not
    Validate {
        /// The streams' dialect; auto detects it per file
        #[arg(short, long, value_name = "DIALECT", default_value = "auto", value_parser = from_values())]
        dialect: String,
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

    /// Print on stderr, per run, what happened to every input line and what the target could not carry
    #[arg(long)]
    pub report: bool,

    /// Make the first bad line fatal: the terminal record is written, then exit 65
    #[arg(long)]
    pub strict: bool,

    /// Longest input line accepted, in bytes; longer lines are reported and skipped
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,

    /// Input streams, each one run, translated in order; standard input when none or -
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
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

fn to_values() -> PossibleValuesParser {
    PossibleValuesParser::new(Dialect::target_names())
}

fn from_values() -> PossibleValuesParser {
    let mut names = vec!["auto"];
    names.extend(Dialect::names());
    PossibleValuesParser::new(names)
}

/// A first word that is no file but nearly a command's name (`agentgate sumary runs/`) is
/// a typo, not an input: say which command was meant (exit 2) rather than ask for `--to`.
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
