//! What FAT32 through fusefat costs to make files, for the note the matrix gives before a
//! run that would take hours there.
//!
//! fusefat looks through the whole directory (in small reads of the device) for every new
//! name, so each file costs more than the one before it: making `n` files in one empty
//! directory grows as `n²`. Measured here (fusefat of Debian 12, 300 MiB FAT32 image on a loop
//! device, 4 KiB files made one by one in one directory): fusefat's own CPU time per file was
//! 0.21–0.26 ms per entry already in the directory from the 200th file to the 700th
//! (5.6 s for the files 200–300, 15.6 s for the files 600–700), and the wall time on an
//! idle machine two to three times that (25 files/s for the first 200, 5 files/s from the
//! 200th to the 400th).

/// fusefat's CPU seconds to make one file, per entry already in its directory: the lower
/// end of what was measured, so that an estimate made with it is a floor.
pub const SECONDS_PER_ENTRY: f64 = 0.0002;

/// Files one FAT directory holds: 65,536 entries of 32 bytes, less `.` and `..`. iolab's
/// file names (`00000000`, …) are 8.3 names of one entry each.
pub const DIR_MAX_FILES: u64 = 65_534;

/// The least seconds fusefat takes to make `files` files in one empty directory.
pub fn fill_seconds(files: u64) -> f64 {
    let n = files as f64;
    SECONDS_PER_ENTRY * n * (n - 1.0).max(0.0) / 2.0
}

/// `secs` as a person reads a long wait: minutes, hours or days.
pub fn long_wait(secs: f64) -> String {
    if secs >= 2.0 * 86_400.0 {
        format!("{:.0} days", secs / 86_400.0)
    } else if secs >= 5_400.0 {
        format!("{:.1} hours", secs / 3_600.0)
    } else {
        format!("{:.0} minutes", (secs / 60.0).ceil())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measured rates: 100 files in a directory of 200–300 took 5.6 s of fusefat's CPU
    /// time, 100 in one of 600–700 took 15.6 s; the floor stays under both.
    #[test]
    fn the_floor_is_under_what_was_measured() {
        let hundred_from = |n: u64| fill_seconds(n + 100) - fill_seconds(n);
        assert!(hundred_from(200) < 5.6 && hundred_from(200) > 4.0);
        assert!(hundred_from(600) < 15.6 && hundred_from(600) > 11.0);
        assert_eq!(fill_seconds(0), 0.0);
        assert_eq!(fill_seconds(1), 0.0);
    }

    #[test]
    fn waits_read_in_their_unit() {
        assert_eq!(long_wait(600.0), "10 minutes");
        assert_eq!(long_wait(4_000.0), "67 minutes");
        assert_eq!(long_wait(12_000.0), "3.3 hours");
        assert_eq!(long_wait(6_400_000.0), "74 days");
    }
}
