//! One timer kept armed on the serving runtime, so that a call's deadline does not wake it.
//!
//! Every call runs under its tool's timeout (`server/call.rs`), a tokio timer registered when the
//! call first waits (an external server's reply, a read on the blocking pool). tokio wakes its
//! driver whenever a timer is registered that is due before the driver's next planned wake-up,
//! and a runtime with no timer at all has none planned: each such call's deadline was the
//! earliest, and registering it woke the driver of the very thread that was registering it (a
//! write to the runtime's eventfd, then one more turn through `epoll_wait` before the thread
//! could sleep). With [`keep_armed`]'s timer due at most [`PERIOD`] ahead, a deadline further
//! away (the default timeout is 300 s) is registered without that wake-up. It costs a wake-up
//! or a few every [`PERIOD`] while the server is idle.

use std::time::Duration;

/// How far ahead the armed timer is due. Calls whose timeout is shorter wake the driver as
/// before (correct, one wake-up more).
pub(crate) const PERIOD: Duration = Duration::from_secs(30);

/// Keeps a timer armed on the current runtime until the returned guard is dropped.
pub(crate) fn keep_armed() -> Armed {
    Armed(tokio::spawn(async {
        loop {
            tokio::time::sleep(PERIOD).await;
        }
    }))
}

/// Stops the timer of [`keep_armed`] when dropped.
pub(crate) struct Armed(tokio::task::JoinHandle<()>);

impl Drop for Armed {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// How many times the runtime's thread went to sleep while a call waited (on another thread,
    /// for 20 ms) under a 300 s deadline, with the timer armed or not.
    fn parks_while_waiting(armed: bool) -> usize {
        let parks = Arc::new(AtomicUsize::new(0));
        let counted = parks.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(move || {
                counted.fetch_add(1, Ordering::Relaxed);
            })
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let _armed = armed.then(super::keep_armed);
            // The armed timer is registered, and the driver has slept once since: it knows when
            // it next has to wake (as a server does by the time its first call comes).
            tokio::time::sleep(Duration::from_millis(1)).await;
            let before = parks.load(Ordering::Relaxed);
            let (tx, rx) = tokio::sync::oneshot::channel();
            let answering = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                let _ = tx.send(());
            });
            let waited = tokio::time::timeout(Duration::from_secs(300), rx).await;
            assert!(matches!(waited, Ok(Ok(()))));
            answering.join().expect("thread");
            parks.load(Ordering::Relaxed) - before
        })
    }

    #[test]
    fn a_deadline_far_ahead_does_not_wake_the_runtime_that_registers_it() {
        // Unarmed, registering the deadline woke the driver: one sleep that ended at once, then
        // the wait. Armed: the wait alone.
        assert_eq!(parks_while_waiting(false), 2);
        assert_eq!(parks_while_waiting(true), 1);
    }
}
