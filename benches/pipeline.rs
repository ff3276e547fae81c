//! Throughput of the whole pipeline (framing, decode, normalize, encode) on synthetic streams
//! of realistic shape, per source and target. `cargo bench` runs it; compare runs with
//! criterion's saved baselines (`--save-baseline`, `--baseline`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

use agentgate::{translate_bytes, Dialect, Options};

/// A localcode run with `rounds` rounds: thinking, text, two tool calls and usage each.
fn localcode_stream(rounds: usize) -> Vec<u8> {
    let mut s = String::new();
    for r in 0..rounds {
        s.push_str("{\"type\": \"thinking_start\", \"reset\": \"false\"}\n");
        s.push_str(&format!("{{\"type\": \"thinking_chunk\", \"chunk\": \"Round {r}: weigh the next step carefully before acting.\"}}\n"));
        s.push_str("{\"type\": \"stream_start\"}\n");
        s.push_str("{\"type\": \"content\", \"chunk\": \"Reading the module — 模块 🙂 — and its tests.\", \"chars\": \"43\"}\n");
        for i in 0..2 {
            s.push_str(&format!("{{\"type\": \"tool_start\", \"name\": \"read_file\", \"args\": \"src/mod_{r}_{i}.py\", \"index\": \"{i}\"}}\n"));
        }
        for i in 0..2 {
            s.push_str(&format!(
                "{{\"type\": \"tool_result\", \"name\": \"read_file\", \"args\": \"src/mod_{r}_{i}.py\", \"index\": \"{i}\", \"result\": \"def f():\\n    return {r}\\n\", \"error\": \"false\"}}\n"
            ));
        }
        s.push_str("{\"type\": \"turn_tokens\", \"prompt_tokens\": \"1200\", \"completion_tokens\": \"80\", \"total_tokens\": \"1280\"}\n");
    }
    s.push_str("{\"type\": \"done\"}\n");
    s.push_str(&format!(
        "{{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"done\", \"tokens\": {{\"prompt\": {}, \"completion\": {}, \"total\": {}}}}}\n",
        1200 * rounds,
        80 * rounds,
        1280 * rounds
    ));
    s.into_bytes()
}

fn bench(c: &mut Criterion) {
    let localcode = localcode_stream(2_000);
    let sources: Vec<(Dialect, Vec<u8>)> = vec![
        (Dialect::Adal, translate_bytes(&localcode, &Options::new(Some(Dialect::Localcode), Dialect::Adal)).0),
        (
            Dialect::Canonical,
            translate_bytes(&localcode, &Options::new(Some(Dialect::Localcode), Dialect::Canonical)).0,
        ),
        (Dialect::Localcode, localcode),
    ];
    let mut group = c.benchmark_group("translate");
    for (from, input) in &sources {
        group.throughput(Throughput::Bytes(input.len() as u64));
        for to in Dialect::all() {
            let opts = Options::new(Some(*from), to);
            group.bench_with_input(BenchmarkId::new(format!("{from}-to-{to}"), input.len()), input, |b, input| {
                b.iter(|| translate_bytes(input, &opts).0.len())
            });
        }
    }
    group.finish();
}

/// Summaries of the fixture transcripts of every dialect, one run after another: files per
/// second on one core (`agentgate summary` spreads files over every core).
fn bench_summary(c: &mut Criterion) {
    let mut files = Vec::new();
    for d in Dialect::all() {
        let dir = format!("{}/tests/fixtures/{}", env!("CARGO_MANIFEST_DIR"), d.name());
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|x| x == "jsonl") {
                files.push(std::fs::read(entry.path()).unwrap());
            }
        }
    }
    let mut group = c.benchmark_group("summary");
    group.throughput(Throughput::Elements(files.len() as u64));
    group.bench_function("fixtures", |b| {
        b.iter(|| files.iter().map(|f| agentgate::summary::summarize(&f[..], "f", None, false).turns).sum::<u64>())
    });
    group.finish();
}

criterion_group!(benches, bench, bench_summary);
criterion_main!(benches);
