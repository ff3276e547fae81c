//! The agent's process: starting it in a process group of its own, stopping it (that group at
//! once), and the threads that forward agentgate's signals to it and stop it at the timeout.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts the agent as `exec`, `exec --from acp` and `agentgate acp` do: no shell, its stdout
/// piped, stderr inherited, in `cwd` where given, and in a process group of its own, so that a
/// terminal's Ctrl-C reaches agentgate alone (which forwards it once) and a stop reaches
/// everything the agent started.
pub fn spawn(program: &str, args: &[String], stdin: Stdio, cwd: Option<&Path>) -> std::io::Result<Child> {
    let mut command = Command::new(program);
    command.args(args).stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::inherit()).process_group(0);
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    command.spawn()
}

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

/// SIGTERM to the agent's process group, then SIGKILL after `grace` unless `finished` first.
fn terminate(pid: u32, grace: Duration, finished: &AtomicBool) {
    kill(pid, libc::SIGTERM);
    let start = Instant::now();
    while start.elapsed() < grace {
        if finished.load(Ordering::SeqCst) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(pid, libc::SIGKILL);
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
        terminate(pid, grace, &finished);
    });
}

/// Stops the agent as soon as the reader of agentgate's stdout is gone (`| head -1` read its
/// line), not at agentgate's next write: an agent can be quiet for minutes, and nobody is left
/// to read what it costs. SIGTERM, then SIGKILL after `grace`, unless `finished` first. Only
/// for a stdout that is a pipe or a socket: poll(2) says POLLERR (pipe) or POLLHUP (socket)
/// once its other end is closed.
pub fn stop_when_unread(pid: u32, grace: Duration, gone: Arc<AtomicBool>, finished: Arc<AtomicBool>) {
    // SAFETY: fstat on our own stdout into a zeroed stat buffer.
    let watched = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(libc::STDOUT_FILENO, &mut st) == 0
            && matches!(st.st_mode & libc::S_IFMT, libc::S_IFIFO | libc::S_IFSOCK)
    };
    if !watched {
        return;
    }
    std::thread::spawn(move || {
        loop {
            if finished.load(Ordering::SeqCst) {
                return;
            }
            let mut fd = libc::pollfd { fd: libc::STDOUT_FILENO, events: 0, revents: 0 };
            // SAFETY: poll(2) on one pollfd we own; no event asked, errors and hang-ups come anyway.
            let n = unsafe { libc::poll(&mut fd, 1, 50) };
            if n > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                break;
            }
        }
        gone.store(true, Ordering::SeqCst);
        terminate(pid, grace, &finished);
    });
}
