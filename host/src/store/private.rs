//! Files only the host's user may read: the result database and key files.
//!
//! A private file is created with mode 0600 whatever the umask, and one that
//! exists already is checked before it is used: a file whose mode grants anything
//! to the group or to others is refused, with a message that names it and says
//! `chmod 600`. The host does not change the mode of a file it did not create:
//! an operator who made it readable by others may have copied it elsewhere too,
//! and should know (for a key: and make a new one).

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// The permission bits a private file may have: the owner's.
#[cfg(unix)]
const OTHERS: u32 = 0o077;

/// Refuses `path` when its mode lets the group or others read or write it.
/// `what` says what the file is ("the signing key", "the result database").
///
/// # Errors
///
/// An error naming the file, its mode and `chmod 600 <file>`, or the error of
/// reading its metadata.
pub fn check(path: &Path, what: &str) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if mode & OTHERS != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{what} {} has mode {mode:04o}, so users other than its owner can read or change it; \
                     run `chmod 600 {}` (and, if others may have read it, replace it)",
                    path.display(),
                    path.display()
                ),
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = (path, what);
    Ok(())
}

/// Creates `path`, which must not exist, with mode 0600 (the umask cannot widen
/// it), and opens it for writing.
///
/// # Errors
///
/// The error of creating it (`AlreadyExists` when it exists).
pub fn create_new(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    // The mode given to open(2) is narrowed by the umask, never widened: 0600 or
    // less. Set it exactly, so a restrictive umask does not lock the owner out.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Makes sure `path` exists as a private file: creates it empty with mode 0600
/// when it is missing, checks it ([`check`]) when it exists.
///
/// # Errors
///
/// As [`check`] and [`create_new`]; each message names the file.
pub fn ensure(path: &Path, what: &str) -> io::Result<()> {
    match create_new(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => check(path, what),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("{what} {}: {e}", path.display()),
        )),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_file_is_0600_and_an_open_one_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        ensure(&path, "the test file").unwrap();
        assert_eq!(mode(&path), 0o600);
        ensure(&path, "the test file").unwrap();
        for open in [0o644, 0o640, 0o604, 0o620] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(open)).unwrap();
            let error = check(&path, "the test file").unwrap_err().to_string();
            assert!(
                error.contains(&format!(
                    "the test file {} has mode 0{open:o}",
                    path.display()
                )),
                "{error}"
            );
            assert!(
                error.contains(&format!("chmod 600 {}", path.display())),
                "{error}"
            );
            assert_eq!(mode(&path), open, "the mode is left as it was");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
        check(&path, "the test file").unwrap();
    }
}
