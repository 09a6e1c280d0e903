//! The built-in workloads: TOML files under `workloads/`, compiled into the binary so
//! `iolab trace run office` works anywhere, and readable as examples of the format.

/// (name, TOML text), in the order `iolab trace list` shows them.
pub const BUILTINS: &[(&str, &str)] = &[
    (
        "hd-playback",
        include_str!("../../../workloads/hd-playback.toml"),
    ),
    (
        "hd-playback-2x",
        include_str!("../../../workloads/hd-playback-2x.toml"),
    ),
    (
        "hd-playback-4x",
        include_str!("../../../workloads/hd-playback-4x.toml"),
    ),
    (
        "hd-record",
        include_str!("../../../workloads/hd-record.toml"),
    ),
    (
        "hd-playback-record",
        include_str!("../../../workloads/hd-playback-record.toml"),
    ),
    (
        "hd-playback-paced",
        include_str!("../../../workloads/hd-playback-paced.toml"),
    ),
    (
        "content-creation",
        include_str!("../../../workloads/content-creation.toml"),
    ),
    ("office", include_str!("../../../workloads/office.toml")),
    (
        "photo-album",
        include_str!("../../../workloads/photo-album.toml"),
    ),
    (
        "file-copy-to",
        include_str!("../../../workloads/file-copy-to.toml"),
    ),
    (
        "file-copy-from",
        include_str!("../../../workloads/file-copy-from.toml"),
    ),
    (
        "dir-copy-to",
        include_str!("../../../workloads/dir-copy-to.toml"),
    ),
    (
        "dir-copy-from",
        include_str!("../../../workloads/dir-copy-from.toml"),
    ),
];

pub fn get(name: &str) -> Option<&'static str> {
    BUILTINS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(n, _)| *n).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_parses() {
        for (name, text) in super::BUILTINS {
            let w = super::super::validate::parse(name, text)
                .unwrap_or_else(|e| panic!("{name}: {}:{}: {}", e.line, e.column, e.reason));
            assert!(!w.description.is_empty(), "{name} has no description");
            assert!(
                text.starts_with(&format!("# {name}:")),
                "{name}: no leading comment"
            );
        }
    }

    #[test]
    fn naspt_numbers_hold() {
        let w = super::super::validate::parse("d", super::get("dir-copy-to").unwrap()).unwrap();
        assert_eq!(w.streams[0].files, 2833);
        assert_eq!(w.streams[0].total_size, Some(1_200_000_000));
        let w = super::super::validate::parse("h", super::get("hd-playback-4x").unwrap()).unwrap();
        assert_eq!(w.streams[0].copies, 4);
    }
}
