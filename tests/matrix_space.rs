//! Space next to time for small files (issue #28, item 5): on NTFS (ntfs-3g) at 512 B, 4 KiB
//! and 64 KiB clusters, df's growth with a run's files in place agrees with what `iolab
//! slack`'s rules predict, and big clusters cost several times the space for small files.
//! The same for ext4 made with `-O inline_data`, whose small files live in the inode.
//! Sizes only, never speed.

mod common;
mod matrix_support;

use iolab::model::files::FilesSpace;
use matrix_support::*;

const FILES: u64 = 300;

/// One run of `FILES` files of each of `sizes` (create, then delete) on each configuration
/// of `config`: its result and stdout.
fn space_matrix(area: &Area, sizes: &str, config: &[&str]) -> (iolab::model::ResultDoc, String) {
    let workload = format!(
        "files:sizes={sizes}:files-per-portion={FILES}:portions=1:passes=1:repeat=1:phases=create,delete"
    );
    let mut extra = config.to_vec();
    extra.extend(["--repeat", "1", "--workload", &workload]);
    area.run_zero(&area.args(&extra))
}

#[test]
fn ntfs_space_with_the_files_in_place_matches_the_slack_rules() {
    let test = "ntfs_space_with_the_files_in_place_matches_the_slack_rules";
    if !can_run(test) {
        return;
    }
    let ntfs = iolab::fs::types::lookup("ntfs").unwrap();
    if let Err(why) = iolab::fs::detect::availability(ntfs) {
        common::skip(test, format_args!("ntfs unavailable: {why}"));
        return;
    }
    let area = Area::new();
    let (doc, stdout) = space_matrix(
        &area,
        "1,1K,2K,4K",
        &[
            "--fs",
            "ntfs",
            "--cluster",
            "512,4K,64K",
            "--image-size",
            "192M",
        ],
    );

    // (cluster, size) -> the create run's space record.
    let mut measured = Vec::new();
    for c in &doc.configurations {
        let unit = c.cluster_bytes_actual.unwrap();
        for t in c
            .tests
            .iter()
            .filter(|t| t.params.get("phase").map(String::as_str) == Some("create"))
        {
            let size: u64 = t.params["file_size_bytes"].parse().unwrap();
            let r = t.runs.last().unwrap().files.as_ref().unwrap();
            assert_eq!(r.files_done, FILES);
            let s: FilesSpace = r
                .space
                .clone()
                .unwrap_or_else(|| panic!("{}: {}: no space record", c.label, t.name));
            let p = s.predicted.clone().expect("a prediction for ntfs-3g");
            assert_eq!(p.rules, "ntfs-3g");
            assert_eq!(p.unit_bytes, unit);
            // One 1 KiB MFT record per file and directory.
            assert_eq!(p.metadata_bytes, (FILES + 1) * 1024);
            let clusters = p.file_allocated_bytes + p.dir_allocated_bytes;
            // Tolerance: the MFT and the index grow in whole chunks, $Bitmap and $LogFile
            // change; 2 clusters + 128 KiB + 2 %.
            let tol = 2 * unit + (128 << 10) + clusters / 50;
            let delta = s.used_delta_bytes.unwrap_or_else(|| {
                panic!(
                    "{}: {}: df's growth left out (other writers)",
                    c.label, t.name
                )
            });
            // The MFT records count only where the MFT must grow: on the fresh file
            // system's first size. Later sizes reuse the records the previous size's
            // delete freed (the MFT never shrinks), so df grows by the clusters alone.
            assert!(
                delta >= clusters as i64 - tol as i64 && delta <= (p.total_bytes + tol) as i64,
                "{}: {}: measured {delta}, predicted clusters {clusters} + metadata {} (tolerance {tol})",
                c.label,
                t.name,
                p.metadata_bytes
            );
            if size <= 512 {
                // Resident in the MFT record: no cluster at any unit.
                assert_eq!(p.file_allocated_bytes, 0, "{}: {}", c.label, t.name);
                assert_eq!(p.resident_files, FILES);
            } else {
                assert_eq!(p.file_allocated_bytes, FILES * size.div_ceil(unit) * unit);
            }
            measured.push((unit, size, delta));
        }
    }
    let get = |unit: u64, size: u64| {
        measured
            .iter()
            .find(|m| m.0 == unit && m.1 == size)
            .map(|m| m.2)
            .unwrap_or_else(|| panic!("no measurement for {unit} / {size}: {measured:?}"))
    };
    // Small files at 64 KiB clusters take several times the space of 512 B clusters.
    for size in [1024, 2048, 4096] {
        let (small, big) = (get(512, size), get(65536, size));
        assert!(
            big > 5 * small,
            "{size} B files: 64 KiB {big}, 512 B {small}"
        );
    }
    assert!(
        stdout.contains("Space with the 300 files of one run in place"),
        "{stdout}"
    );
}

/// An ext4 made with `-O inline_data` keeps files up to 128 B (256-byte inodes) in the
/// inode. The prediction came from the type alone: 1.58 MiB for 400 one-byte files that took
/// 0.01 MiB. It now reads the mounted device's superblock (`FsRules::as_mounted`).
#[test]
fn ext4_inline_data_space_is_predicted_from_the_superblock() {
    let test = "ext4_inline_data_space_is_predicted_from_the_superblock";
    if !can_run(test) {
        return;
    }
    if !common::tool_or_skip(test, "mkfs.ext4", "e2fsprogs") {
        return;
    }
    let area = Area::new();
    let (doc, _) = space_matrix(
        &area,
        "1,100,4K",
        &[
            "--fs",
            "ext4",
            "--cluster",
            "4K",
            "--mkfs-opts",
            "-O inline_data -I 256",
            "--image-size",
            "64M",
        ],
    );
    let c = &doc.configurations[0];
    let mut sizes = Vec::new();
    for t in c
        .tests
        .iter()
        .filter(|t| t.params.get("phase").map(String::as_str) == Some("create"))
    {
        let size: u64 = t.params["file_size_bytes"].parse().unwrap();
        let r = t.runs.last().unwrap().files.as_ref().unwrap();
        assert_eq!(r.files_done, FILES);
        let s = r.space.clone().expect("space record");
        let p = s.predicted.clone().expect("a prediction for ext4");
        assert_eq!(p.rules, "ext4-inline", "{}", t.name);
        let delta = s.used_delta_bytes.expect("df's growth");
        // Tolerance: the directory's blocks come and go in whole blocks, the journal does
        // not count; 2 blocks + 64 KiB.
        let tol = 2 * 4096 + (64 << 10);
        if size <= 128 {
            assert_eq!((p.file_allocated_bytes, p.resident_files), (0, FILES));
            // Really in the inodes: far below a block per file.
            assert!(
                delta < (FILES * 4096 / 4) as i64 && delta <= (p.total_bytes + tol) as i64,
                "{size} B: measured {delta}, predicted {}",
                p.total_bytes
            );
        } else {
            assert_eq!(p.file_allocated_bytes, FILES * 4096);
            assert!(
                delta >= (p.file_allocated_bytes - tol) as i64
                    && delta <= (p.total_bytes + tol) as i64,
                "{size} B: measured {delta}, predicted {}",
                p.total_bytes
            );
        }
        sizes.push(size);
    }
    sizes.sort_unstable();
    assert_eq!(sizes, [1, 100, 4096]);
}
