//! stdin and stdout on tokio's reactor when they are pipes or sockets, as they
//! are under an MCP client that spawned the host.
//!
//! tokio's `Stdin` and `Stdout` run each read and each write as a task on the
//! blocking pool: every request and every response hops to another thread and
//! back. A pipe can be polled like a socket instead: set non-blocking, it is
//! registered with the reactor ([`AsyncFd`]) and read and written on the
//! runtime's own threads when ready. A terminal or a regular file (a
//! redirection) keeps tokio's blocking way: a terminal is shared with the shell,
//! and epoll refuses regular files.
//!
//! The descriptor's flags are restored when the pipe is dropped: the open file
//! description may be shared with the process that gave it.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::either::Either;

/// The host's stdin: on the reactor when it is a pipe or a socket.
pub type Input = Either<Pipe, tokio::io::Stdin>;
/// The host's stdout: on the reactor when it is a pipe or a socket.
pub type Output = Either<Pipe, tokio::io::Stdout>;

/// stdin and stdout for the stdio transport.
pub fn stdio() -> (Input, Output) {
    let input = match Pipe::new(libc::STDIN_FILENO) {
        Some(pipe) => Either::Left(pipe),
        None => Either::Right(tokio::io::stdin()),
    };
    // Non-blocking is a flag of the open file description: stderr on the same
    // pipe (`2>&1`) would become non-blocking too, and the log would lose lines.
    // So such a stdout is left as it is, never switched and switched back.
    let shared = same_file(libc::STDOUT_FILENO, libc::STDERR_FILENO);
    let output = match (!shared).then(|| Pipe::new(libc::STDOUT_FILENO)).flatten() {
        Some(pipe) => Either::Left(pipe),
        None => Either::Right(tokio::io::stdout()),
    };
    (input, output)
}

/// What `fstat` says of `fd`, if it is open.
fn stat(fd: RawFd) -> Option<libc::stat> {
    // SAFETY: `fstat` on a descriptor number only reads its status into
    // `stat`; an invalid one fails with EBADF.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut stat) } == 0).then_some(stat)
}

/// Whether `a` and `b` are the same file (the same pipe, socket or terminal).
fn same_file(a: RawFd, b: RawFd) -> bool {
    match (stat(a), stat(b)) {
        (Some(a), Some(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

/// A descriptor of the process, borrowed: never closed here.
struct Fd(RawFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// A pipe or socket of the process, non-blocking and on the reactor.
pub struct Pipe {
    fd: AsyncFd<Fd>,
    /// The descriptor's status flags as found, restored on drop.
    flags: libc::c_int,
}

impl Pipe {
    /// `fd` on the reactor, if it is a pipe or a socket and can be made
    /// non-blocking and registered; `None` otherwise (the caller keeps
    /// tokio's blocking way). Needs a tokio runtime with I/O enabled.
    fn new(fd: RawFd) -> Option<Pipe> {
        let kind = stat(fd)?.st_mode & libc::S_IFMT;
        if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
            return None;
        }
        // SAFETY: `fcntl` on a descriptor number only reads or sets its status
        // flags; an invalid one fails with EBADF.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return None;
        }
        // SAFETY: stdin and stdout stay open for the life of the process; nothing
        // here closes or replaces them.
        match unsafe { AsyncFd::register(Fd(fd)) } {
            Ok(fd) => Some(Pipe { fd, flags }),
            Err(error) => {
                tracing::debug!(fd, %error, "stdio stays on the blocking pool");
                unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
                None
            }
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: as in `Pipe::new`.
        unsafe { libc::fcntl(self.fd.get_ref().0, libc::F_SETFL, self.flags) };
    }
}

/// The result of a `read` or `write` system call.
fn syscall(n: libc::ssize_t) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

impl AsyncRead for Pipe {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let read = ready.try_io(|fd| {
                // SAFETY: `unfilled` is initialized memory of that length.
                syscall(unsafe {
                    libc::read(fd.get_ref().0, unfilled.as_mut_ptr().cast(), unfilled.len())
                })
            });
            match read {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                // Not ready after all: wait for the next readiness.
                Err(_) => {}
            }
        }
    }
}

impl AsyncWrite for Pipe {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut ready = ready!(self.fd.poll_write_ready(cx))?;
            let written = ready.try_io(|fd| {
                // SAFETY: `bytes` is valid for reads of its length.
                syscall(unsafe { libc::write(fd.get_ref().0, bytes.as_ptr().cast(), bytes.len()) })
            });
            match written {
                Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                Ok(result) => return Poll::Ready(result),
                Err(_) => {}
            }
        }
    }

    /// Nothing is buffered here: a write is in the pipe once it returns.
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
