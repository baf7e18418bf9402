//! Standard output that never panics: a closed pipe (`planwright schema
//! standard_v1 | head -1`) ends the program quietly with the exit status a
//! shell reports for a process killed by SIGPIPE, as `cat` or `git` do.

use std::io::Write;

/// The exit status of a process that SIGPIPE ended (128 + 13).
pub(crate) const BROKEN_PIPE: i32 = 141;

/// Writes `args` to standard output; a closed pipe ends the program.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        failed(&e);
    }
}

/// Ends the program after a failed write to standard output.
fn failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(BROKEN_PIPE);
    }
    // Best effort: stderr may be gone as well.
    let _ = writeln!(
        std::io::stderr(),
        "error: cannot write to standard output: {e}"
    );
    std::process::exit(crate::error::exit::USAGE);
}

/// `crate::out!` that ends the program on a closed pipe instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

/// `crate::outln!` that ends the program on a closed pipe instead of panicking.
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}
