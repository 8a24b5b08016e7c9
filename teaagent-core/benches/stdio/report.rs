//! The report: every contender's figures as a table, and the performance issue's targets, each
//! judged on this run.

use std::time::Duration;

use crate::build::Built;
use crate::stats::{median, per_round};
use crate::{Contender, Figures};

/// One figure of every contender: how it is read from [`Figures`], shown, and compared.
pub(crate) struct Column {
    name: &'static str,
    /// The contender's value (a median of rounds, or a percentile of samples).
    value: fn(&Figures) -> f64,
    show: fn(f64) -> String,
}

pub(crate) fn report(contenders: &[Contender], quick: bool, built: &Built) {
    fn us(v: f64) -> String {
        format!("{:.1} µs", v * 1e6)
    }
    fn ms(v: f64) -> String {
        format!("{:.2} ms", v * 1e3)
    }
    fn mib(v: f64) -> String {
        format!("{:.1} MiB", v / 1024.0)
    }
    fn secs(d: &[Duration]) -> Vec<f64> {
        d.iter().map(Duration::as_secs_f64).collect()
    }
    fn kib(v: &[u64]) -> Vec<f64> {
        v.iter().map(|&k| k as f64).collect()
    }
    let columns = [
        Column { name: "cold start", value: |f| median(&secs(&f.cold_starts)), show: ms },
        Column { name: "seq p50 (1 core)", value: |f| per_round(&f.pinned, 50), show: us },
        Column { name: "seq p99 (1 core)", value: |f| per_round(&f.pinned, 99), show: us },
        Column { name: "seq p50 (2 cores)", value: |f| per_round(&f.free, 50), show: us },
        Column { name: "seq p99 (2 cores)", value: |f| per_round(&f.free, 99), show: us },
        Column {
            name: "pipelined/s",
            value: |f| median(&f.pipelined_per_s),
            show: |v| format!("{:.0}k", v / 1e3),
        },
        Column { name: "CPU µs/call", value: |f| median(&secs(&f.cpu_per_call)), show: us },
        Column { name: "1 MiB echo/s", value: |f| median(&f.mib_echo_per_s), show: |v| format!("{v:.0}") },
        Column { name: "idle RSS", value: |f| median(&kib(&f.idle_rss_kib)), show: mib },
        Column { name: "peak RSS", value: |f| median(&kib(&f.peak_rss_kib)), show: mib },
    ];
    let limit = &contenders[0].figures;
    // values[contender][column]; NaN where a contender was not measured on a column.
    let values: Vec<Vec<f64>> = contenders
        .iter()
        .map(|c| {
            columns
                .iter()
                .enumerate()
                .map(|(i, col)| if c.cold_start_only && i > 0 { f64::NAN } else { (col.value)(&c.figures) })
                .collect()
        })
        .collect();
    let ratio = |c: usize, col: usize| values[c][col] / values[0][col];
    println!();
    println!(
        "{} interleaved rounds{}; the limit's figures are absolute, the others' are ratios to it (value in brackets).",
        limit.peak_rss_kib.len(),
        if quick { " (BENCH_QUICK)" } else { "" }
    );
    if built.packed_relocs {
        println!(
            "Every server is linked with packed relative relocations (`-z pack-relative-relocs`), as `teaagent` is here."
        );
    } else {
        println!(
            "No server is linked with packed relative relocations: `teaagent-cli/build.rs` did not give them to `teaagent` here (glibc older than 2.36, a cross build, or TEAAGENT_PACKED_RELOCS=0)."
        );
    }
    let (found, listed) = built.hot_functions;
    println!(
        "`teaagent` alone is also linked with its hot functions together (`teaagent-cli/link/hot-functions.txt`): {found} of the {listed} listed are in this build{}.",
        if found * 2 < listed {
            "; the list is stale, refresh it with `python3 teaagent-cli/link/refresh_hot_functions.py`"
        } else {
            ""
        }
    );
    println!();
    print!("| server |");
    for col in &columns {
        print!(" {} |", col.name);
    }
    println!();
    println!("|---|{}", "---|".repeat(columns.len()));
    for (ci, c) in contenders.iter().enumerate() {
        print!("| {} |", c.name);
        for (i, col) in columns.iter().enumerate() {
            let v = values[ci][i];
            if v.is_nan() {
                print!(" — |");
            } else if ci == 0 {
                print!(" {} |", (col.show)(v));
            } else {
                print!(" {:.2}× ({}) |", ratio(ci, i), (col.show)(v));
            }
        }
        println!();
    }

    // The targets of the performance issue, each judged on this run.
    const COLD: usize = 0;
    const P50_1: usize = 1;
    const P99_1: usize = 2;
    const P50_2: usize = 3;
    const P99_2: usize = 4;
    const PIPE: usize = 5;
    const CPU: usize = 6;
    const MIB: usize = 7;
    const IDLE: usize = 8;
    const PEAK: usize = 9;
    let (rmcp, echo, serve) = (1, 2, 3);
    let at_most = |v: f64, t: f64| (v <= t, format!("{v:.2}× (≤ {t}×)"));
    let at_least = |v: f64, t: f64| (v >= t, format!("{v:.2}× (≥ {t}×)"));
    let checks = [
        ("1 MiB echo calls/s ≥ 1.1×", at_least(ratio(echo, MIB), 1.1)),
        (
            "1 MiB echo calls/s ahead of rmcp",
            (
                values[echo][MIB] > values[rmcp][MIB],
                format!("{:.2}× of rmcp's", values[echo][MIB] / values[rmcp][MIB]),
            ),
        ),
        ("peak RSS ≤ 2×", at_most(ratio(echo, PEAK), 2.0)),
        (
            "idle RSS ≤ rmcp's",
            (
                values[echo][IDLE] <= values[rmcp][IDLE],
                format!("{:.2}× of rmcp's", values[echo][IDLE] / values[rmcp][IDLE]),
            ),
        ),
        ("pipelined calls/s ≥ 0.6×", at_least(ratio(echo, PIPE), 0.6)),
        ("seq p50 ≤ 1.3× (1 core)", at_most(ratio(echo, P50_1), 1.3)),
        ("seq p50 ≤ 1.3× (2 cores)", at_most(ratio(echo, P50_2), 1.3)),
        ("seq p99 ≤ 3× (1 core)", at_most(ratio(echo, P99_1), 3.0)),
        ("seq p99 ≤ 3× (2 cores)", at_most(ratio(echo, P99_2), 3.0)),
        ("CPU per call ≤ 2.5×", at_most(ratio(echo, CPU), 2.5)),
        ("cold start, echo example ≤ 1.2×", at_most(ratio(echo, COLD), 1.2)),
        ("cold start, teaagent mcp serve ≤ 1.5×", at_most(ratio(serve, COLD), 1.5)),
    ];
    println!();
    println!("| target | teaagent | holds |");
    println!("|---|---|---|");
    for (name, (holds, shown)) in checks {
        println!("| {name} | {shown} | {} |", if holds { "yes" } else { "**no**" });
    }
}
