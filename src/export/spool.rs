//! The spool: batches that could not be delivered, each kept as a file of OTLP/JSON (one
//! request a line, the form the Collector's `otlpjsonfile` receiver reads), and
//! `agentgate export`, which sends such files and removes what was accepted.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use agentgate::dialect::otlp::{ExportMetricsServiceRequest, ExportTraceServiceRequest};
use sha2::{Digest, Sha256};

use super::{Config, Exporter, Payload, Sent, UNAVAILABLE};
use crate::cli::OtlpFlags;

/// Writes one batch's line as `agentgate-SIGNAL-HASH.jsonl` in `dir` (made if missing): named
/// by its content, so the same batch spooled twice is one file, and written whole or not at all
/// (a temporary name, then a rename).
pub fn write(dir: &Path, signal: &str, line: &[u8]) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let hash: String = Sha256::digest(line)[..8].iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("agentgate-{signal}-{hash}.jsonl");
    let path = dir.join(&name);
    let tmp = dir.join(format!(".{name}.tmp"));
    fs::write(&tmp, line)?;
    fs::rename(&tmp, &path)?;
    Ok(path)
}

/// One line of a spool file as the request it is, and the runs it holds (its traces' distinct
/// trace ids, or its metrics' resources).
fn read_line(line: &str) -> Result<(Payload, usize), String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    if value.get("resourceSpans").is_some() {
        let traces: ExportTraceServiceRequest = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let ids: BTreeSet<&[u8]> = traces
            .resource_spans
            .iter()
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| &s.spans)
            .map(|s| &s.trace_id[..])
            .collect();
        let runs = ids.len();
        return Ok((Payload::Traces(traces), runs));
    }
    if value.get("resourceMetrics").is_some() {
        let metrics: ExportMetricsServiceRequest = serde_json::from_value(value).map_err(|e| e.to_string())?;
        let runs = metrics.resource_metrics.len();
        return Ok((Payload::Metrics(metrics), runs));
    }
    Err("neither resourceSpans nor resourceMetrics".into())
}

/// The files `paths` name: files as they are, folders' `*.jsonl` and `*.json` (sorted; not
/// the spool's unfinished `.*.tmp`).
fn files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = fs::read_dir(p)
                .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<PathBuf>>())
                .unwrap_or_default()
                .into_iter()
                .filter(|f: &PathBuf| {
                    f.is_file()
                        && f.extension().is_some_and(|x| x == "jsonl" || x == "json")
                        && !f.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// `agentgate export DIR...`: every request in the spool's files sent, one request a line; a
/// file whose lines were all accepted is removed, one partly accepted keeps the lines that were
/// not. Exit 0, 69 naming the runs not delivered, 66 for a file that cannot be read, 2 for no
/// endpoint.
pub fn export_command(flags: &OtlpFlags, paths: &[PathBuf]) -> u8 {
    let config = match Config::from_flags(flags) {
        Ok(Some(c)) => c,
        Ok(None) => {
            eprintln!("agentgate: export: no endpoint: give --otlp-endpoint URL or set OTEL_EXPORTER_OTLP_ENDPOINT");
            return 2;
        }
        Err(e) => {
            eprintln!("agentgate: {e}");
            return 2;
        }
    };
    let files = files(paths);
    if files.is_empty() {
        eprintln!("agentgate: export: no *.jsonl or *.json files to send");
    }
    let mut exporter = Exporter::new(Config { spool: None, ..config }, files.len());
    let (mut runs, mut undelivered, mut unread) = (0, 0, false);
    for file in &files {
        let text = match fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("agentgate: {}: cannot read: {e}", file.display());
                unread = true;
                continue;
            }
        };
        let mut kept = String::new();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let (payload, count) = match read_line(line) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("agentgate: {}:{}: not an OTLP/JSON request: {e}; kept", file.display(), n + 1);
                    kept.push_str(line);
                    kept.push('\n');
                    continue;
                }
            };
            runs += count;
            let signal = match payload {
                Payload::Traces(_) => exporter.config.traces.clone(),
                Payload::Metrics(_) => exporter.config.metrics.clone(),
            };
            let body = payload.body(signal.protocol);
            match exporter.send(&body, &signal) {
                Sent::Delivered => {}
                Sent::Failed(why) => {
                    if exporter.said.insert(why.clone()) {
                        exporter.clear();
                        eprintln!("agentgate: otlp: {why}");
                    }
                    undelivered += count;
                    kept.push_str(line);
                    kept.push('\n');
                }
            }
            exporter.runs = runs;
            exporter.draw();
        }
        let done = if kept.is_empty() {
            fs::remove_file(file)
        } else if kept.len() < text.len() {
            rewrite(file, &kept)
        } else {
            Ok(())
        };
        if let Err(e) = done {
            eprintln!("agentgate: {}: cannot update: {e}", file.display());
        }
    }
    exporter.clear();
    if undelivered > 0 {
        eprintln!("agentgate: otlp: {undelivered} of {runs} runs not delivered; their lines stay in the files given");
        return UNAVAILABLE;
    }
    if unread {
        return 66;
    }
    0
}

/// A file replaced whole by `text` (a temporary name, then a rename).
fn rewrite(file: &Path, text: &str) -> io::Result<()> {
    let tmp = file.with_extension("jsonl.tmp");
    fs::write(&tmp, text)?;
    fs::rename(&tmp, file)
}
