//! The agentgate binary: parses the command line and runs the command it names
//! ([`commands`]), whose exit status it exits with.

mod cli;
mod commands;
#[cfg(unix)]
mod exec;

use std::process::ExitCode;

use clap::Parser;

use agentgate::Dialect;
#[cfg(unix)]
use agentgate::EncodeOptions;
use cli::{Cli, Command};
use commands::*;

fn main() -> ExitCode {
    if let Some(code) = cli::mistyped_command() {
        return ExitCode::from(code);
    }
    let cli = Cli::parse();
    let code = match cli.command {
        Some(Command::Dialects { markdown: true }) => {
            write_out(agentgate::contract::markdown(&Dialect::target_names()).as_bytes())
        }
        Some(Command::Dialects { markdown: false }) => dialects(),
        Some(Command::Detect { files }) => detect_command(&files),
        Some(Command::Completions { shell }) => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "agentgate", &mut text);
            write_out(&text)
        }
        Some(Command::Man) => {
            let mut text = Vec::new();
            match clap_mangen::Man::new(<Cli as clap::CommandFactory>::command()).render(&mut text) {
                Ok(()) => write_out(&text),
                Err(e) => {
                    eprintln!("agentgate: cannot write the manual page: {e}");
                    status::IO
                }
            }
        }
        Some(Command::Validate { dialect, warnings, strict, format, paths }) => {
            validate_command(&dialect, warnings, strict, format, &paths)
        }
        #[cfg(unix)]
        Some(Command::Exec {
            to,
            from,
            timeout,
            kill_after,
            json_deltas,
            include_partial_messages,
            otlp_semconv,
            otlp_tool_content,
            input_format,
            command,
            ..
        }) => {
            let mut encode = EncodeOptions::default();
            encode.json_deltas = json_deltas;
            encode.include_partial_messages = include_partial_messages;
            encode.otlp_semconv = semconv(&otlp_semconv);
            encode.otlp_tool_content = otlp_tool_content;
            // The agent runs now: its lines' arrival is their time.
            encode.live_times = true;
            let stream_input = input_format == "stream-json";
            exec_command(&to, &from, timeout.as_deref(), &kill_after, encode, stream_input, &command)
        }
        Some(Command::Summary { from, full, totals, format, strict, paths }) => {
            summary_command(&from, full, totals, format, strict, &paths)
        }
        None => run(&cli.translate),
    };
    ExitCode::from(code)
}
