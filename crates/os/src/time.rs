//! The local time zone, which only the C library knows (rustix has no
//! time zones: they come from the C library's reading of `TZ` and
//! `/etc/localtime`).

/// The local time zone's offset from UTC at the Unix time `unix`, in
/// seconds (0 where the C library cannot tell).
pub fn utc_offset(unix: i64) -> i64 {
    let t = unix as libc::time_t;
    // SAFETY: `tm` is plain data, zeroed, which `localtime_r` fills (or
    // leaves alone when it returns null); both pointers are valid for the
    // call, and the reentrant variant keeps no state of its own.
    let filled = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        (!libc::localtime_r(&t, &mut tm).is_null()).then_some(tm)
    };
    filled.map_or(0, |tm| tm.tm_gmtoff)
}
