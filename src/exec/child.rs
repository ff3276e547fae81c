//! The agent's process: stopping it, its process group at once, and the threads that forward
//! agentgate's signals to it and stop it at the timeout.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sends `sig` to the agent's process group: the agent and whatever it started, so that none of
/// them keeps its stdout open after it was stopped.
pub fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) on the process group of a child we spawned; no memory is involved.
    unsafe {
        libc::kill(-(pid as libc::pid_t), sig);
    }
}

/// Forwards SIGINT, SIGTERM and SIGHUP to the agent's process group (a second SIGINT as
/// SIGKILL), noting the last one in `seen`; the handle closes the forwarding.
pub fn forward_signals(pid: u32, seen: Arc<AtomicI32>) -> Option<signal_hook::iterator::Handle> {
    match signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM, libc::SIGHUP]) {
        Ok(mut signals) => {
            let handle = signals.handle();
            std::thread::spawn(move || {
                let mut interrupts = 0;
                for sig in signals.forever() {
                    seen.store(sig, Ordering::SeqCst);
                    if sig == libc::SIGINT {
                        interrupts += 1;
                    }
                    kill(pid, if interrupts > 1 { libc::SIGKILL } else { sig });
                }
            });
            Some(handle)
        }
        Err(e) => {
            eprintln!("agentgate: cannot forward signals: {e}");
            None
        }
    }
}

/// Stops the agent at `limit` unless `finished` first: SIGTERM (`timed_out` set), then
/// SIGKILL after `grace`.
pub fn stop_after(pid: u32, limit: Duration, grace: Duration, timed_out: Arc<AtomicBool>, finished: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < limit {
            if finished.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20).min(limit));
        }
        timed_out.store(true, Ordering::SeqCst);
        kill(pid, libc::SIGTERM);
        let start = Instant::now();
        while start.elapsed() < grace {
            if finished.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        kill(pid, libc::SIGKILL);
    });
}
