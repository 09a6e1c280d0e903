//! What is written: the same bytes from every engine, the zero pattern, `--verify` passing on
//! honest storage and catching a flipped bit.

use super::*;

/// Find iolab's kept test file in `dir`.
fn test_file(dir: &Path) -> PathBuf {
    test_file_in(dir).expect("kept test file")
}

#[test]
fn sync_and_uring_write_identical_files() {
    let mut contents = Vec::new();
    for (engine, qd) in [("sync", "1"), ("uring", "16"), ("uring", "3")] {
        let d = tempdir();
        let out = iolab_in(
            d.path(),
            &[
                "run",
                "--engine",
                engine,
                "--iodepth",
                qd,
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--size",
                "4M",
                "--io-size",
                "4M",
                "--repeat",
                "1",
                "--keep",
                "--json",
                "--no-save",
            ],
        );
        let doc = json_ok(&out);
        // Size-based: every block exactly once.
        assert_eq!(doc["tests"][0]["runs"][0]["ops"], 1024);
        contents.push(std::fs::read(test_file(d.path())).unwrap());
    }
    assert_eq!(contents[0].len(), 4 << 20);
    assert!(
        contents[0] == contents[1],
        "sync and uring QD16 wrote different bytes"
    );
    assert!(
        contents[0] == contents[2],
        "sync and uring QD3 wrote different bytes"
    );
    // Incompressible and unique: no two 4 KiB blocks are equal.
    let mut blocks: Vec<&[u8]> = contents[0].chunks(4096).collect();
    blocks.sort();
    blocks.dedup();
    assert_eq!(blocks.len(), 1024);
}

#[test]
fn zero_pattern_writes_zeros() {
    let d = tempdir();
    let out = iolab_in(
        d.path(),
        &[
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "1M",
            "--io-size",
            "1M",
            "--pattern",
            "zero",
            "--repeat",
            "1",
            "--keep",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_ok(&out);
    assert_eq!(doc["tests"][0]["settings"]["pattern"], "zero");
    let data = std::fs::read(test_file(d.path())).unwrap();
    assert!(data.iter().all(|&b| b == 0));
}

#[test]
fn verify_passes_on_honest_storage() {
    // The sync engine keeps one I/O in flight per job (a deeper --iodepth is refused).
    for (engine, rw, qd) in [
        ("sync", "randrw", "1"),
        ("uring", "randrw", "8"),
        ("uring", "readwrite", "8"),
    ] {
        let d = tempdir();
        let out = iolab_in(
            d.path(),
            &[
                "run",
                "--verify",
                "--engine",
                engine,
                "--rw",
                rw,
                "--bs",
                "4k",
                "--iodepth",
                qd,
                "--repeat",
                "1",
                "--io-size",
                "4M",
                "--ramp",
                "0",
                "--size",
                "4M",
                "--json",
                "--no-save",
            ],
        );
        let doc = json_ok(&out);
        assert_eq!(doc["tests"][0]["params"]["verify"], "true");
        assert_eq!(
            doc["tests"][0]["runs"][0]["ops"], 1024,
            "{engine} {rw}: 4 MiB of 4 KiB"
        );
    }
}

#[test]
fn verify_finds_corruption_behind_iolabs_back() {
    let d = tempdir();
    let f = d.path().join("data.bin");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let fs = f.display().to_string();
    // Write the whole file once, sealed.
    let out = iolab_in(
        d.path(),
        &[
            "run",
            "--target",
            &fs,
            "--allow-destroy",
            &fs,
            "--verify",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--io-size",
            "1M",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ],
    );
    json_ok(&out);
    // Reading it back with the same seed verifies...
    let read_args = [
        "run",
        "--target",
        &fs,
        "--allow-destroy",
        &fs,
        "--verify",
        "--prefill",
        "false",
        "--rw",
        "read",
        "--bs",
        "4k",
        "--io-size",
        "1M",
        "--repeat",
        "1",
        "--json",
        "--no-save",
    ];
    json_ok(&iolab_in(d.path(), &read_args));
    // ...until one bit flips.
    let mut data = std::fs::read(&f).unwrap();
    data[5000] ^= 0x10;
    std::fs::write(&f, &data).unwrap();
    let out = iolab_in(d.path(), &read_args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("data verification failed at offset 4608"),
        "{stderr}"
    );
    assert!(stderr.contains("corrupted"), "{stderr}");
}

/// Data space a file system has in use (statvfs), after committing what is written.
fn used_bytes(dir: &Path) -> u64 {
    let f = std::fs::File::open(dir).unwrap();
    nix::unistd::syncfs(&f).unwrap();
    let s = nix::sys::statvfs::statvfs(dir).unwrap();
    (s.blocks() - s.blocks_free()) as u64 * s.fragment_size() as u64
}

/// A btrfs mounted with `compress-force=zstd` compresses extents of up to 128 KiB, so 16
/// sequential 8 KiB writes share one. The default pattern fills every such write anew and
/// must not shrink (and the test file must not be preallocated: btrfs never compresses a
/// file with preallocated extents, which hid the compression altogether); `stamped` writes
/// are alike but for their stamps and shrink (measured: 32 MiB for 256 MiB).
#[test]
fn a_compressing_btrfs_cannot_shrink_the_default_writes() {
    const TEST: &str = "a_compressing_btrfs_cannot_shrink_the_default_writes";
    let mut used = Vec::new();
    for pattern in ["random", "stamped"] {
        let Some(fs) = scratch_or_skip(TEST, "btrfs", 512 << 20, &[], "compress-force=zstd") else {
            return;
        };
        let before = used_bytes(fs.path());
        let out = iolab_in(
            fs.path(),
            &[
                "run",
                "-t",
                ".",
                "--rw",
                "write",
                "--bs",
                "8K",
                "--iodepth",
                "1",
                "--size",
                "64M",
                "--io-size",
                "64M",
                "--repeat",
                "1",
                "--direct",
                "false",
                "--pattern",
                pattern,
                "--keep",
                "--json",
                "--no-save",
            ],
        );
        let doc = json_ok(&out);
        assert_eq!(doc["tests"][0]["settings"]["pattern"], pattern);
        used.push(used_bytes(fs.path()).saturating_sub(before));
    }
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    assert!(
        used[0] >= 60 << 20,
        "btrfs stored 64 MiB of default writes in {:.1} MiB",
        mib(used[0])
    );
    assert!(
        used[1] <= 32 << 20,
        "stamped writes were expected to shrink (alike but for stamps): {:.1} MiB",
        mib(used[1])
    );
}
