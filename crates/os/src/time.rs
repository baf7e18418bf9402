//! The local time zone, which only the C library knows.

/// The local time zone's offset from UTC at the Unix time `unix`, in
/// seconds (0 where the C library cannot tell).
pub fn utc_offset(unix: i64) -> i64 {
    let t = unix as libc::time_t;
    // SAFETY: tm is plain data; localtime_r fills it or returns null.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the duration of the call.
    let filled = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if filled {
        tm.tm_gmtoff
    } else {
        0
    }
}
