//! `shell_exec`: a command line run by `sh -c` in the workspace.
//!
//! The command runs in its own process group with stdin from `/dev/null` and its own pipes for
//! stdout and stderr, so it can neither read the protocol's stdin nor write a line onto the
//! protocol's stdout. When the command's shell exits, its timeout passes, the call is cancelled
//! or the server stops, every process the command started is killed — also those that left the
//! process group (`setsid`, double forks, `nohup`, daemons ignoring SIGTERM): on Linux each call
//! runs in its own cgroup, or, where the server cannot create one, the server is a subreaper and
//! kills the call's descendants (see `crate::containment` for how, and what still escapes).
//! The command runs in the OS sandbox of the permission mode ([`crate::sandbox`]: in
//! `workspace-write` it may write only the workspace and its own `TMPDIR`, and has no network).
//! Output is capped per stream: the first and the last 32 KiB are kept, with a marker saying how
//! much was left out in between.

mod environment;

pub use environment::{CREDENTIAL_PATTERNS, ShellEnvironment};

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

use super::common::{bytes, path_error, workspace};
use crate::containment::{Kind, Scope};
use crate::mcp::CallToolResult;
use crate::tool;
use crate::tool::{ToolContext, ToolError};
use crate::workspace::Target;

/// Bytes kept from the start and from the end of each stream.
const KEEP: usize = 32 * 1024;
/// The command's timeout unless it asks for another.
const DEFAULT_TIMEOUT: u64 = 120;

/// Run a shell command (`sh -c`) in the workspace root, or in `cwd` inside it, and return its
/// exit code, stdout and stderr (each capped: the first and last 32 KiB). stdin is empty. The
/// command and everything it starts are killed when it finishes, times out (default 120 s, at
/// most 3600 s) or is cancelled. A non-zero exit code or a timeout is reported as an error result.
#[tool(
    unregistered,
    destructive,
    stateful,
    tier = "high",
    title = "Run shell command",
    rate_limit(max_calls = 10, window_secs = 60),
    timeout_secs = 3660,
    task
)]
pub async fn shell_exec(
    ctx: &ToolContext,
    /// The command line, run by `sh -c`.
    #[command]
    command: String,
    /// Seconds before the command is killed (default 120, at most 3600).
    timeout_secs: Option<crate::Bounded<1, 3600>>,
    /// The directory to run in, relative to the workspace root (default: the root).
    #[path]
    cwd: Option<String>,
) -> Result<CallToolResult, ToolError> {
    let ws = workspace(ctx)?;
    let cwd = cwd.unwrap_or_else(|| ".".to_owned());
    // The directory that was judged (and approved), not the name again: see `server/call.rs`.
    let dir = match ctx.path_target("cwd") {
        Some(approved) => approved.clone(),
        None => ws.resolve(&cwd).map_err(|e| path_error(&cwd, e))?,
    };
    if dir.target() != Target::Dir {
        return Err(ToolError::new(format!("`{cwd}` is not a directory")));
    }
    // Entered through its open handle, never by name: a root or directory renamed and replaced
    // by a link since it was resolved cannot send the command elsewhere.
    let dir = dir.open_dir().map_err(|e| path_error(&cwd, e))?;
    let limit = Duration::from_secs(timeout_secs.map_or(DEFAULT_TIMEOUT, crate::Bounded::get));
    let scope = Scope::new(Kind::Shell).map_err(ToolError::new)?;
    // The mode's sandbox (the server's, else `workspace-write`'s), set up before anything runs;
    // refused here when it cannot be enforced and the configuration says so.
    let sandbox = ctx.state::<crate::sandbox::Sandbox>().cloned().unwrap_or_default();
    let files: Vec<std::path::PathBuf> = scope.cgroup_procs().into_iter().collect();
    // Off the runtime's thread: it reads the workspace's git index (`sandbox/git_data.rs`),
    // which a large repository makes megabytes long.
    let root = ws.root().to_path_buf();
    let jail = tokio::task::spawn_blocking(move || sandbox.prepare(Some(&root), &files))
        .await
        .map_err(|e| ToolError::new(format!("cannot prepare the command's sandbox: {e}")))?
        .map_err(ToolError::new)?;
    let env = ctx.state::<ShellEnvironment>().cloned().unwrap_or_default();
    let mut cmd = scope.shell_command(&command);
    // The server's own secrets, and by default the user's credentials, stay out of what a
    // command can read (`environment`).
    cmd.env_clear().envs(env.apply(std::env::vars_os()));
    scope.mark(&mut cmd);
    jail.apply(&mut cmd);
    let mut child = cmd
        .current_dir(handle_path(&dir))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ToolError::new(format!("cannot start `sh`: {e}")))?;
    // Bound after the child, so dropped before it (while the shell still links its
    // descendants): kills everything the command started whenever this call ends — normally,
    // by timeout, by cancellation (this future is dropped), by panic.
    let mut scope = {
        use std::os::fd::AsFd;
        scope.started(
            child.id(),
            &[child.stdout.as_ref().map(|s| s.as_fd()), child.stderr.as_ref().map(|s| s.as_fd())],
        )
    };
    let stdout = tokio::spawn(capture(child.stdout.take()));
    let stderr = tokio::spawn(capture(child.stderr.take()));
    let started = Instant::now();
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.tick().await;
    let status = loop {
        tokio::select! {
            status = child.wait() => break Some(status),
            () = tokio::time::sleep_until((started + limit).into()) => break None,
            _ = ticker.tick(), if ctx.wants_progress() => {
                let elapsed = started.elapsed().as_secs();
                ctx.progress(elapsed as f64, Some(limit.as_secs() as f64), Some(&format!("running for {elapsed}s")));
            }
        }
    };
    // The shell is done (or out of time): nothing it started may linger and hold the pipes.
    scope.close();
    if status.is_none() {
        let _ = child.wait().await;
    }
    let (out, err) = (collect(stdout).await, collect(stderr).await);
    let elapsed = started.elapsed();
    let mut text = String::new();
    if let Some(warning) = jail.warning() {
        text.push_str(warning);
        text.push('\n');
    }
    let failed = match &status {
        None => {
            text.push_str(&format!(
                "timed out after {}s: the command and everything it started were killed\n",
                limit.as_secs()
            ));
            true
        }
        Some(Ok(status)) => match status.code() {
            Some(code) => {
                text.push_str(&format!("exit code: {code}\n"));
                code != 0
            }
            None => {
                text.push_str(&format!("killed by a signal ({status})\n"));
                true
            }
        },
        Some(Err(e)) => {
            text.push_str(&format!("waiting for the command failed: {e}\n"));
            true
        }
    };
    text.push_str(&format!(
        "duration: {:.2}s\n--- stdout ---\n{out}\n--- stderr ---\n{err}",
        elapsed.as_secs_f64()
    ));
    Ok(if failed { CallToolResult::error(text) } else { CallToolResult::text(text) })
}

/// A stream, kept head and tail.
struct Captured {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    total: u64,
}

async fn capture(stream: Option<impl AsyncRead + Unpin>) -> Captured {
    let mut captured = Captured { head: Vec::new(), tail: std::collections::VecDeque::new(), total: 0 };
    let Some(mut stream) = stream else { return captured };
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        captured.total += n as u64;
        let mut chunk = &buf[..n];
        if captured.head.len() < KEEP {
            let take = (KEEP - captured.head.len()).min(chunk.len());
            captured.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        captured.tail.extend(chunk);
        while captured.tail.len() > KEEP {
            captured.tail.pop_front();
        }
    }
    captured
}

/// The captured text, or a note when the stream could not be collected in time (a process
/// that escaped the clean-up still holds it).
async fn collect(task: tokio::task::JoinHandle<Captured>) -> String {
    let abort = task.abort_handle();
    match tokio::time::timeout(Duration::from_secs(2), task).await {
        Ok(Ok(c)) => {
            let head = String::from_utf8_lossy(&c.head);
            if c.tail.is_empty() {
                return head.into_owned();
            }
            let tail: Vec<u8> = c.tail.into_iter().collect();
            let left_out = c.total - (c.head.len() + tail.len()) as u64;
            if left_out == 0 {
                return format!("{head}{}", String::from_utf8_lossy(&tail));
            }
            format!(
                "{head}\n[… {} left out: {} in all; the first and last {} are shown …]\n{}",
                bytes(left_out),
                bytes(c.total),
                bytes(KEEP as u64),
                String::from_utf8_lossy(&tail)
            )
        }
        _ => {
            abort.abort();
            "[output incomplete: a process that escaped the call's clean-up still holds the pipe]".into()
        }
    }
}

/// A path that names the open directory `dir` itself, for `chdir` in the child: on Linux the
/// child's `/proc/self/fd/N`, which is the inherited handle (still open until `exec`) and leads to
/// the directory whatever its name is now. Elsewhere its `/dev/fd/N` (the same on the BSDs and
/// macOS, where fdescfs serves it).
fn handle_path(dir: &std::os::fd::OwnedFd) -> std::path::PathBuf {
    use std::os::fd::AsRawFd;
    let prefix = if cfg!(target_os = "linux") { "/proc/self/fd" } else { "/dev/fd" };
    std::path::PathBuf::from(format!("{prefix}/{}", dir.as_raw_fd()))
}
