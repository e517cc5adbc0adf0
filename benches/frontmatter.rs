//! `cargo bench --bench frontmatter`: what reading a typical frontmatter costs natively (YAML
//! reading and the key checks, `runvil::parse::frontmatter::parse`), the median of interleaved
//! samples.

use std::time::Instant;

const PARSES: usize = 20_000;
const SAMPLES: usize = 9;

/// A frontmatter using what prompts usually declare: a name, a folded description, Packs, two
/// roles (one through an alias), arguments, inputs and outputs.
const TYPICAL: &str = "\
name: research
description: >
  Finds sources on a topic
  and summarises them.
runvil: 0
uses: [web, acme/notes]
models:
  default: &base { provider: openai, model: \"gpt-5\", temperature: 0.2 }
  fast: *base
args:
  topic: { type: string, default: 'rivers' }
  depth:
    type: integer
    default: 2
input:
  - notes/today.md
output: [report.md]
max_tool_iterations: 8
";

fn main() {
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..PARSES {
                std::hint::black_box(runvil::parse::frontmatter::parse(std::hint::black_box(TYPICAL), 2).unwrap());
            }
            start.elapsed().as_secs_f64() * 1e6 / PARSES as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    println!("frontmatter parse ({} bytes): {:.2} us (median of {SAMPLES} x {PARSES})", TYPICAL.len(), samples[SAMPLES / 2]);
}
