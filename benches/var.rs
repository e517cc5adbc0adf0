//! `cargo bench --bench var`: appending N items to `var.list` and reading them all back, for N
//! from 1k to 64k. Reads and writes through `var` walk the JSON by reference, so the time per
//! item should stay flat as N grows (it grew with N while every read copied the subtree).

mod common;
use common::InstantHost;
use runvil::RunOptions;
use std::rc::Rc;
use std::time::{Duration, Instant};

const SAMPLES: usize = 5;

fn source(n: usize) -> String {
    format!(
        "---\nname: var-bench\ndescription: append to var.list and read it back\nrunvil: 0\n---\n\n# Bench\n\n## Main\n\n```lua\n\
         var.list = json.array()\n\
         for i = 1, {n} do var.list[#var.list + 1] = 'item ' .. i end\n\
         local total = 0\n\
         for i = 1, #var.list do total = total + #var.list[i] end\n\
         return total\n```\n"
    )
}

/// What the prompt returns: the total length of the item strings.
fn expected(n: usize) -> usize {
    (1..=n).map(|i| 5 + i.to_string().len()).sum()
}

fn run_once(src: &str) -> (Duration, String) {
    let options =
        RunOptions { limits: runvil::LimitOverrides { instructions: Some(u64::MAX), ..Default::default() }, ..Default::default() };
    let start = Instant::now();
    let result = futures::executor::block_on(runvil::run(src, options, Rc::new(InstantHost)));
    let elapsed = start.elapsed();
    (elapsed, result.expect("the benchmark prompt runs").expect("it returns"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    println!("var: append N items to var.list, then read them all back ({SAMPLES} samples each)");
    println!("{:>7} {:>10} {:>10} {:>10} {:>14}", "N", "min ms", "median ms", "max ms", "median µs/item");
    // `VAR_BENCH_MAX_K=8` stops after N = 8k (to compare with slower builds).
    let max_k: usize = std::env::var("VAR_BENCH_MAX_K").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    for k in [1, 2, 4, 8, 16, 32, 64].into_iter().filter(|&k| k <= max_k) {
        let n = k * 1000;
        let src = source(n);
        let mut times: Vec<Duration> = (0..SAMPLES)
            .map(|_| {
                let (t, result) = run_once(&src);
                assert_eq!(result, expected(n).to_string());
                t
            })
            .collect();
        times.sort();
        let median = times[SAMPLES / 2];
        println!(
            "{n:>7} {:>10.1} {:>10.1} {:>10.1} {:>14.2}",
            ms(times[0]),
            ms(median),
            ms(times[SAMPLES - 1]),
            median.as_secs_f64() * 1e6 / n as f64
        );
    }
}
