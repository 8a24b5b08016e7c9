//! The command's own temporary directory (`TMPDIR`).

use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;

/// A directory of the command's own under the system's temporary directory, removed with
/// everything in it when dropped. Its name is random and it is made new (`mkdir` fails on a name
/// that exists): a directory left by a server that was killed, or made by a server in another
/// PID namespace (where process ids repeat), is never taken over, nor removed.
pub(super) struct TempDir {
    /// Where it is.
    pub(super) path: PathBuf,
}

impl TempDir {
    pub(super) fn new() -> Result<TempDir, String> {
        let mut tries = 0;
        loop {
            let path = std::env::temp_dir().join(format!("teaagent-shell-{}", crate::digest::random_hex(8)));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
                Err(e) => {
                    return Err(format!(
                        "cannot create the command's temporary directory {}: {e}",
                        path.display()
                    ));
                }
            }
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_is_new_and_never_takes_over_or_removes_another() {
        let kept = TempDir::new().expect("a directory");
        std::fs::write(kept.path.join("mine"), "x").expect("write");
        let others: Vec<TempDir> = (0..50).map(|_| TempDir::new().expect("a directory")).collect();
        let mut names: Vec<&PathBuf> = others.iter().map(|t| &t.path).chain([&kept.path]).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 51, "every directory has a name of its own");
        assert!(
            !kept.path.to_string_lossy().contains(&std::process::id().to_string()),
            "not named by the pid"
        );
        let gone: Vec<PathBuf> = others.iter().map(|t| t.path.clone()).collect();
        drop(others);
        assert!(gone.iter().all(|p| !p.exists()), "removed when dropped");
        assert_eq!(std::fs::read_to_string(kept.path.join("mine")).expect("still there"), "x");
    }
}
