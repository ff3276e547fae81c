//! Throughput of agentgate, over corpora generated from the fixture transcripts
//! (`benches/support/corpus.rs`: tool outputs of 400 B to 16 KB among short lines, distinct ids):
//!
//! - `decode/<dialect>`: framing, scanning each line and the dialect's decoder, alone (no digest);
//! - `encode/<dialect>`: the normalizer and the dialect's encoder, from records decoded ahead
//!   (from the localcode corpus, the richest in kinds), alone;
//! - `translate/<from>-to-<to>`: the whole pipeline, for every pair of dialects;
//! - `summary/fixtures`: `agentgate summary` over every fixture.
//!
//! `cargo bench` runs them all (a few minutes); `cargo bench -- decode/` one group. Compare runs
//! with criterion's baselines (`--save-baseline`, `--baseline`). `scripts/bench.sh` measures
//! the binary on 200 MB corpora beside the parse-and-print floors and jq.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};

use agentgate::codec::{Decoded, Dialect, EncodeOptions, Encoding, Record, Sink};
use agentgate::io::framing::{Frame, Lines};
use agentgate::json::object::Object;
use agentgate::normalize::Normalizer;
use agentgate::report::Report;
use agentgate::{translate_bytes, Options};

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/corpus.rs"]
#[allow(dead_code)]
mod corpus;

/// Bytes per generated corpus: enough for every line kind many times over, small enough for
/// criterion's repetitions.
const CORPUS_BYTES: usize = 4_000_000;

fn corpus(d: Dialect) -> Vec<u8> {
    let text = std::fs::read_to_string(common::representative(d)).expect("fixture");
    let mut out = Vec::with_capacity(CORPUS_BYTES + 64 * 1024);
    corpus::scale(&text, CORPUS_BYTES, &mut out).expect("corpus");
    out
}

/// Decodes a whole stream, handing what each line (and the end) decoded to `each`.
fn decode(input: &[u8], d: Dialect, mut each: impl FnMut(&mut Decoded)) {
    let mut lines = Lines::new(input, usize::MAX);
    // Decoding alone: the input's digest is the pipeline's business, for some targets only.
    lines.stop_hashing();
    let mut decoder = d.decoder();
    let mut decoded = Decoded::default();
    while let Ok(Some((_, frame))) = lines.next_frame() {
        if let Frame::Text(text) = frame {
            if let Ok(Ok(obj)) = Object::parse(text) {
                let _ = decoder.decode(obj, &mut decoded);
                each(&mut decoded);
            }
        }
    }
    decoder.finish(&mut decoded);
    each(&mut decoded);
}

/// The number of records in a stream, so that nothing is optimized away.
fn decode_all(input: &[u8], d: Dialect) -> usize {
    let mut records = 0;
    decode(input, d, |x| {
        records += x.records.len();
        x.clear();
    });
    records
}

fn records_of(input: &[u8], d: Dialect) -> Vec<Record> {
    let mut all = Vec::new();
    decode(input, d, |x| all.append(&mut x.records));
    all
}

fn bench(c: &mut Criterion) {
    let corpora: Vec<(Dialect, Vec<u8>)> = Dialect::all().map(|d| (d, corpus(d))).collect();

    let mut group = c.benchmark_group("decode");
    group.sample_size(10).measurement_time(Duration::from_secs(2));
    for (d, input) in &corpora {
        group.throughput(Throughput::Bytes(input.len() as u64));
        group.bench_with_input(BenchmarkId::from_parameter(d), input, |b, input| b.iter(|| decode_all(input, *d)));
    }
    group.finish();

    // Encoders, fed the same records; throughput is counted in the source bytes they stand for.
    let (source, input) = &corpora[0];
    let records = records_of(input, *source);
    let mut group = c.benchmark_group("encode");
    group.sample_size(10).measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Bytes(input.len() as u64));
    for to in Dialect::all() {
        group.bench_function(BenchmarkId::from_parameter(to), |b| {
            b.iter_batched(
                || records.clone(),
                |records| {
                    let mut encoder = to.encoder(&EncodeOptions::default());
                    let mut norm = Normalizer::new(*source, to, encoder.hints());
                    let (mut out, mut report) = (Vec::with_capacity(1 << 20), Report::default());
                    let mut sink = Sink::new(&mut out, &mut report);
                    for rec in records {
                        norm.process(rec, &mut Encoding::new(encoder.as_mut(), &mut sink));
                        if sink.out.len() > 1 << 20 {
                            sink.out.clear();
                        }
                    }
                    norm.finish(None, &mut Encoding::new(encoder.as_mut(), &mut sink));
                    out.len()
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();

    let mut group = c.benchmark_group("translate");
    group.sample_size(10).measurement_time(Duration::from_secs(2));
    for (from, input) in &corpora {
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
