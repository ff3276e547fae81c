//! The agentgate binary: parses the command line and runs the command it names
//! ([`commands`]), whose exit status it exits with.

#[cfg(unix)]
mod acp;
mod cli;
mod commands;
#[cfg(unix)]
mod exec;
mod export;

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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            if e.use_stderr() {
                if let Some(tip) = cli::dashdash_tip() {
                    eprintln!("{tip}");
                }
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let code = match cli.command {
        Some(Command::Dialects { markdown: true }) => {
            // The protocol agentgate serves (agentgate acp) has its contract too.
            let mut names = Dialect::target_names();
            names.push("acp");
            write_out(agentgate::contract::markdown(&names).as_bytes())
        }
        Some(Command::Dialects { markdown: false }) => dialects(),
        Some(Command::Detect { files }) => detect_command(&files),
        Some(Command::Completions { shell }) => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "agentgate", &mut text);
            write_out(&text)
        }
        Some(Command::Man { command }) => {
            let mut text = Vec::new();
            let cli = <Cli as clap::CommandFactory>::command();
            // A subcommand's page is agentgate-NAME(1), as the main page's SEE ALSO names it.
            let page = match command.as_deref() {
                None => cli,
                Some(name) => match cli.find_subcommand(name) {
                    Some(sub) => {
                        // A name that lives as long as the command: this process prints one page and ends.
                        let page: &'static str = Box::leak(format!("agentgate-{name}").into_boxed_str());
                        sub.clone().name(page).version(env!("CARGO_PKG_VERSION"))
                    }
                    None => {
                        let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
                        eprintln!("agentgate: no command is called '{name}' (commands: {})", names.join(", "));
                        return ExitCode::from(2);
                    }
                },
            };
            match clap_mangen::Man::new(page).render(&mut text) {
                Ok(()) => write_out(&text),
                Err(e) => {
                    eprintln!("agentgate: cannot write the manual page: {e}");
                    status::IO
                }
            }
        }
        Some(Command::Validate { from, warnings, strict, format, paths }) => {
            validate_command(&from, warnings, strict, format, &paths)
        }
        #[cfg(unix)]
        Some(Command::Exec {
            to,
            from,
            timeout,
            kill_after,
            tee,
            json_deltas,
            include_partial_messages,
            otlp_semconv,
            otlp_tool_content,
            input_format,
            export,
            prompt,
            permission,
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
            exec_command(
                &to,
                &from,
                timeout.as_deref(),
                &kill_after,
                encode,
                stream_input,
                &export,
                prompt,
                &permission,
                tee,
                &command,
            )
        }
        #[cfg(unix)]
        Some(Command::Acp {
            from,
            timeout,
            kill_after,
            cancel_grace,
            permission,
            context_window,
            max_line_bytes,
            command,
        }) => acp_command(
            &from,
            timeout.as_deref(),
            &kill_after,
            &cancel_grace,
            permission == "allow",
            context_window,
            max_line_bytes,
            command,
        ),
        Some(Command::Summary {
            from,
            full,
            totals,
            format,
            conditions,
            sort,
            reverse,
            group_by,
            columns,
            strict,
            otlp_time,
            export,
            paths,
        }) => {
            let shape =
                Shape { totals, conditions, sort, reverse, group_by: group_by.and_then(|g| g.parse().ok()), columns };
            summary_command(&from, full, format, &shape, strict, otlp_time, &export, &paths)
        }
        Some(Command::View { from, follow, color, file }) => {
            view_command(&from, follow, &color, file.as_deref().unwrap_or(std::path::Path::new("-")))
        }
        Some(Command::Export { export, paths }) => export::export_command(&export, &paths),
        None => run(&cli.translate),
    };
    ExitCode::from(code)
}
