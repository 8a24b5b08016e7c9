//! What the load benchmarks (`stdio`, `http`) share.

/// Pins the calling thread (and so the servers it spawns) to the first allowed CPU, or unpins it.
pub(crate) fn pin_to_first_core(pin: bool) {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};
    static ALLOWED: std::sync::OnceLock<Option<CpuSet>> = std::sync::OnceLock::new();
    let Some(allowed) = ALLOWED.get_or_init(|| sched_getaffinity(None).ok()) else { return };
    let set = if pin {
        let Some(first) = (0..CpuSet::MAX_CPU).find(|&c| allowed.is_set(c)) else { return };
        let mut one = CpuSet::new();
        one.set(first);
        one
    } else {
        *allowed
    };
    if let Err(e) = sched_setaffinity(None, &set) {
        eprintln!("cannot change CPU affinity ({e}); latencies are unpinned");
    }
}
