//! SSE parsing throughput: a few MB of realistic Chat Completions chunks (text deltas,
//! tool-call argument pieces, keep-alives, a usage chunk) fed to the parser in randomly
//! sized pieces, as a network would deliver them. Prints the median MB/s of several
//! runs, for the parser alone and for the parser plus decoding each chunk's JSON.
//!
//! Run: `cargo bench --bench sse`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use harness9::llm::retry::Jitter;
use harness9::llm::sse::SseParser;
use harness9::llm::wire::ChatChunk;

const TARGET_BYTES: usize = 4 << 20;
const RUNS: usize = 9;

fn stream() -> Vec<u8> {
    let words = [
        "the",
        "parser",
        "reads",
        "bytes",
        "→",
        "naïve",
        "tokens",
        "fn",
        "main()",
        "{",
        "}",
        "über",
        "\\n",
        "\\\"quoted\\\"",
        "stream",
        "model",
        "answer",
    ];
    let mut rng = Jitter::seeded(7);
    let mut out = Vec::with_capacity(TARGET_BYTES + 4096);
    let mut n = 0u64;
    while out.len() < TARGET_BYTES {
        n += 1;
        let pick = |rng: &mut Jitter| words[(rng.next_u64() % words.len() as u64) as usize];
        match n % 50 {
            0 => out.extend_from_slice(b": keep-alive\n\n"),
            1..=9 => {
                let piece = format!("{{\\\"path\\\":\\\"src/{}.rs\\\"", pick(&mut rng));
                out.extend_from_slice(format!(
                    "data: {{\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{piece}\"}}}}]}},\"finish_reason\":null}}]}}\r\n\r\n"
                ).as_bytes());
            }
            _ => {
                let text = format!(" {} {}", pick(&mut rng), pick(&mut rng));
                out.extend_from_slice(format!(
                    "data: {{\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_1\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
                ).as_bytes());
            }
        }
    }
    out.extend_from_slice(b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n");
    out
}

/// Random piece sizes between 1 byte and 16 KiB, weighted towards network-sized reads.
fn pieces(len: usize) -> Vec<usize> {
    let mut rng = Jitter::seeded(99);
    let mut cuts = Vec::new();
    let mut at = 0;
    while at < len {
        let size = match rng.next_u64() % 4 {
            0 => 1 + (rng.next_u64() % 64) as usize,
            1 => 1 + (rng.next_u64() % 1500) as usize,
            _ => 1 + (rng.next_u64() % 16384) as usize,
        };
        let size = size.min(len - at);
        cuts.push(size);
        at += size;
    }
    cuts
}

fn run(bytes: &[u8], sizes: &[usize], decode: bool) -> (Duration, usize) {
    let start = Instant::now();
    let mut parser = SseParser::new(1 << 20);
    let mut events = 0;
    let mut at = 0;
    let handle = |data: &str| {
        if decode && data != "[DONE]" {
            let chunk: ChatChunk = serde_json::from_str(data).unwrap_or_default();
            black_box(chunk);
        }
    };
    for &size in sizes {
        for ev in parser.feed(&bytes[at..at + size]).unwrap_or_default() {
            handle(&ev.data);
            events += 1;
        }
        at += size;
    }
    for ev in parser.finish().unwrap_or_default() {
        handle(&ev.data);
        events += 1;
    }
    (start.elapsed(), black_box(events))
}

fn median_mbps(bytes: &[u8], sizes: &[usize], decode: bool) -> (f64, usize) {
    let mut rates: Vec<f64> = Vec::new();
    let mut events = 0;
    run(bytes, sizes, decode); // warm-up
    for _ in 0..RUNS {
        let (t, n) = run(bytes, sizes, decode);
        events = n;
        rates.push(bytes.len() as f64 / (1024.0 * 1024.0) / t.as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    (rates[rates.len() / 2], events)
}

fn main() {
    let bytes = stream();
    let sizes = pieces(bytes.len());
    let mb = bytes.len() as f64 / (1024.0 * 1024.0);
    println!(
        "sse bench: {mb:.1} MiB in {} random pieces, median of {RUNS} runs",
        sizes.len()
    );
    let (rate, events) = median_mbps(&bytes, &sizes, false);
    println!("  SSE parse only:          {rate:8.1} MiB/s  ({events} events)");
    let (rate, _) = median_mbps(&bytes, &sizes, true);
    println!("  SSE parse + chunk JSON:  {rate:8.1} MiB/s");
}
