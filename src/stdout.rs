//! Standard output, whose reader going away (`| head`) ends a command
//! quietly: only a write to it, never any other IO, is excused so.

use std::io::{self, Write};

/// The error of a write to standard output once its reader went away.
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub struct StdoutClosed;

/// Standard output, locked; a broken pipe on it is a [`StdoutClosed`].
pub fn lock() -> Stdout {
    Stdout(io::stdout().lock())
}

/// Standard output, locked, that tells its reader going away from other IO.
pub struct Stdout(io::StdoutLock<'static>);

fn closed(error: io::Error) -> io::Error {
    if error.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, StdoutClosed)
    } else {
        error
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(closed)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(closed)
    }
}

/// Whether `error` is standard output's reader going away.
pub fn is_closed(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<StdoutClosed>()
            || cause
                .downcast_ref::<io::Error>()
                .and_then(io::Error::get_ref)
                .is_some_and(|inner| inner.is::<StdoutClosed>())
    })
}
