//! `/proc/diskstats`: one device's line, parsed. The leaf under the phase counters
//! (`diskstats`) and the device facts (`blockdev`), which both read it.

/// One line of /proc/diskstats (fields as documented in Documentation/admin-guide/iostats.rst).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub name: String,
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub io_ticks_ms: u64,
    pub discard_sectors: u64,
    pub flush_ios: u64,
}

pub fn parse_line(line: &str) -> Option<DiskStat> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 14 {
        return None;
    }
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Some(DiskStat {
        name: f[2].to_string(),
        read_ios: n(3),
        read_merges: n(4),
        read_sectors: n(5),
        write_ios: n(7),
        write_merges: n(8),
        write_sectors: n(9),
        io_ticks_ms: n(12),
        discard_sectors: n(16),
        flush_ios: n(18),
    })
}

/// The current counters of device `name` (kernel name, e.g. `loop3`).
pub fn read(name: &str) -> Option<DiskStat> {
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    text.lines().filter_map(parse_line).find(|d| d.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_line() {
        let l = "   7       0 loop0 120 0 960 10 300 2 2400 50 0 40 60 0 0 0 0 5 1";
        let d = parse_line(l).unwrap();
        assert_eq!(d.name, "loop0");
        assert_eq!(d.read_sectors, 960);
        assert_eq!(d.write_ios, 300);
        assert_eq!(d.write_merges, 2);
        assert_eq!(d.write_sectors, 2400);
        assert_eq!(d.io_ticks_ms, 40);
        assert_eq!(d.flush_ios, 5);
    }
}
