//! What each contender is measured on: cold starts, sequential calls (interleaved over the
//! contenders), pipelined calls, 1 MiB echoes, memory and CPU time.

use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::server::{Server, call_line};
use crate::{Contender, IN_FLIGHT, Scale, support};

/// One cold start: spawn → the `initialize` answer read.
pub(crate) fn cold_start(c: &mut Contender) {
    let t = Instant::now();
    let mut server = Server::start(c);
    server.initialize();
    c.figures.cold_starts.push(t.elapsed());
    server.stop();
}

/// Calls answered one at a time by every contender at once, in blocks of [`BLOCK`] calls per
/// contender in turn: a burst of scheduling delay (on a virtual machine a sleeping vCPU can take
/// ~0.1 ms to wake) lasts milliseconds, and falls on whichever contender is answering then;
/// blocks spread such bursts over all contenders alike. `pinned`: client and servers share one
/// core (the servers inherit the affinity of the thread that spawns them).
pub(crate) fn sequential_interleaved(contenders: &mut [Contender], calls: usize, pinned: bool) {
    const BLOCK: usize = 100;
    support::pin_to_first_core(pinned);
    let mut running: Vec<(usize, Server, Vec<Duration>)> = contenders
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.cold_start_only)
        .map(|(i, c)| {
            let mut server = Server::start(c);
            server.initialize();
            (i, server, Vec::with_capacity(calls))
        })
        .collect();
    let mut done = 0;
    while done < calls {
        let block = BLOCK.min(calls - done);
        for (_, server, latencies) in &mut running {
            sequential(server, done, block, latencies);
        }
        done += block;
    }
    for (i, server, latencies) in running {
        server.stop();
        let figures = &mut contenders[i].figures;
        if pinned { figures.pinned.push(latencies) } else { figures.free.push(latencies) }
    }
    support::pin_to_first_core(false);
}

pub(crate) fn measure(c: &mut Contender, scale: &Scale) {
    if c.cold_start_only {
        return;
    }
    let mut server = Server::start(c);
    server.initialize();
    let pid = server.child.id();
    // Idle: after the handshake and one call, with nothing in flight.
    sequential(&mut server, 0, 1, &mut Vec::new());
    std::thread::sleep(Duration::from_millis(50));
    c.figures.idle_rss_kib.push(proc_status_kib(pid, "VmRSS:"));

    // Pipelined calls, 256 in flight; CPU time of the server over this phase.
    let cpu_before = cpu_time(pid);
    c.figures.pipelined_per_s.push(pipelined(&mut server, scale.pipelined));
    c.figures.cpu_per_call.push(cpu_time(pid).saturating_sub(cpu_before) / scale.pipelined as u32);

    // 1 MiB echoes, one at a time.
    let big = "x".repeat(1 << 20);
    let mut line = String::new();
    let t = Instant::now();
    for i in 0..scale.mib_calls {
        server.send(&call_line(i + 1, &big));
        server.read_line(&mut line);
        assert!(line.len() > 1 << 20, "short answer to a 1 MiB echo");
    }
    c.figures.mib_echo_per_s.push(scale.mib_calls as f64 / t.elapsed().as_secs_f64());

    c.figures.peak_rss_kib.push(proc_status_kib(pid, "VmHWM:"));
    server.stop();
}

/// `calls` calls, one at a time, with ids from `first + 1`.
pub(crate) fn sequential(server: &mut Server, first: usize, calls: usize, latencies: &mut Vec<Duration>) {
    let mut line = String::new();
    for i in first..first + calls {
        let request = call_line(i + 1, "hello");
        let t = Instant::now();
        server.send(&request);
        server.read_line(&mut line);
        latencies.push(t.elapsed());
    }
    assert!(line.contains("\"text\":\"hello\""), "bad echo answer: {line}");
}

/// Keeps `IN_FLIGHT` calls outstanding: a writer thread sends whenever the reader has freed a
/// slot. Returns calls per second.
pub(crate) fn pipelined(server: &mut Server, calls: usize) -> f64 {
    let (freed_tx, freed_rx) = mpsc::sync_channel::<()>(IN_FLIGHT);
    for _ in 0..IN_FLIGHT {
        freed_tx.send(()).expect("slots");
    }
    let mut stdin = server.stdin.take().expect("stdin");
    let t = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(64 * 1024);
        let mut sent = 0;
        while sent < calls {
            // Take every free slot, then write them in one go.
            freed_rx.recv().expect("slot");
            batch.clear();
            batch.extend_from_slice(call_line(sent + 1_000_000, "hello").as_bytes());
            sent += 1;
            while sent < calls && freed_rx.try_recv().is_ok() {
                batch.extend_from_slice(call_line(sent + 1_000_000, "hello").as_bytes());
                sent += 1;
            }
            stdin.write_all(&batch).expect("write");
            stdin.flush().expect("flush");
        }
        stdin
    });
    let mut line = String::new();
    for _ in 0..calls {
        server.read_line(&mut line);
        let _ = freed_tx.try_send(());
    }
    let elapsed = t.elapsed();
    server.stdin = Some(writer.join().expect("writer"));
    calls as f64 / elapsed.as_secs_f64()
}

/// CPU time of every thread of `pid` (from /proc/PID/task/*/schedstat, in nanoseconds).
pub(crate) fn cpu_time(pid: u32) -> Duration {
    let mut total = 0u64;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(task.path().join("schedstat")) {
                total += s.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            }
        }
    }
    Duration::from_nanos(total)
}

/// A `kB` field of /proc/PID/status (`VmRSS:` resident now, `VmHWM:` the peak).
pub(crate) fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
