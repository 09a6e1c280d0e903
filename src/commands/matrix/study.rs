//! The built-in studies as workload references, decided at run time by trying to resolve
//! them: a family that is not built yet is replaced by what exists (never by a stub).

use super::workload::{WorkloadPlan, resolve_ref as try_resolve};
use crate::cli::matrix::Study;
use crate::error::UsageError;

/// Belov's Table 1: file sizes 1 B, cluster+1 B, 512 B...64 KiB.
const CLUSTER_SIZES: &str = "1,cluster+1,512,1K,2K,4K,8K,16K,32K,64K";

/// Belov's counts: 10,000 files per portion, 20 portions, 16 passes.
const FULL_COUNTS: (u64, u64, u64) = (10_000, 20, 16);
/// Scaled down: 1,000 files per portion, 2 portions, 1 pass (20,000 files per configuration).
const QUICK_COUNTS: (u64, u64, u64) = (1_000, 2, 1);

/// The `files:` reference of `--study cluster` for images of `size` bytes.
pub fn cluster_reference(full: bool, size: u64) -> String {
    let (n, portions, passes) = if full { FULL_COUNTS } else { QUICK_COUNTS };
    // Belov's big file was 20 GB; it must fit the image with the small files' room.
    let big = if full {
        (20u64 << 30).min(size / 2)
    } else {
        (256u64 << 20).min(size / 8)
    } & !((1 << 20) - 1);
    format!(
        "files:sizes={CLUSTER_SIZES}:files-per-portion={n}:portions={portions}:passes={passes}:big={}M:repeat=1",
        big >> 20
    )
}

/// The notes for configurations mounted through fusefat (`labels`), which makes files the
/// slower the fuller their directory (`fs::fusefat`): for each workload that makes files, a
/// floor of its create phases alone over `runs` fresh file systems when it comes to ten
/// minutes or more, and a workload that would put more files in one directory than FAT holds.
pub fn fusefat_notes(workloads: &[WorkloadPlan], runs: u32, labels: &[String]) -> Vec<String> {
    use crate::fs::fusefat::{DIR_MAX_FILES, long_wait};
    let on = labels.join(", ");
    let thousands = |n: u64| crate::units::fmt_thousands(n as f64);
    let mut notes = Vec::new();
    for w in workloads {
        let Some(m) = w.workload.file_making() else {
            continue;
        };
        if m.files_per_directory > DIR_MAX_FILES {
            notes.push(format!(
                "{} puts {} files in one directory; FAT32 ({on}) holds at most {} in one, so its create phase there stops when the directory is full; leave fat32 out of --fs, or give fewer files per directory (files-per-portion=, portions=, passes=, layout=per-portion)",
                w.label,
                thousands(m.files_per_directory),
                thousands(DIR_MAX_FILES)
            ));
            continue;
        }
        let secs = m.fusefat_seconds() * f64::from(runs.max(1));
        if secs >= 600.0 {
            notes.push(format!(
                "{} on FAT32 through fusefat ({on}): fusefat looks through the whole directory for every new file, so it makes them the slower the more the directory holds, and the create phases alone ({} files in {} a run) take at least {} per configuration over {} run(s); leave fat32 out of --fs, or give fewer files per directory (files-per-portion=, portions=, passes=, layout=per-portion)",
                w.label,
                thousands(m.files_per_directory),
                match m.directories {
                    1 => "one directory".to_string(),
                    n => format!("each of {} directories", thousands(n)),
                },
                long_wait(secs),
                m.runs * u64::from(runs.max(1))
            ));
        }
    }
    notes
}

/// The twelve-file-system copy test's media mix (about 2.03 GB) copied to the file system:
/// the data set and its copy must fit the image, so it is scaled to 40 % of the image each
/// (never above 1). With the test's reference line, the same copy RAM to RAM (`ceiling`),
/// which the study left out.
pub fn linux_fs_copy_reference(size: u64) -> String {
    const MEDIA_MIX_BYTES: f64 = 2_026_000_000.0;
    let size = size as f64;
    let scale = (0.4 * size / MEDIA_MIX_BYTES).min(1.0);
    format!("copy:dataset=media-mix:scale={scale:.3}:repeat=1:ceiling=true")
}

/// The workloads of a study; notes say which were chosen and why.
pub fn workloads(
    study: Study,
    full: bool,
    size: u64,
    notes: &mut Vec<String>,
) -> Result<Vec<WorkloadPlan>, UsageError> {
    match study {
        Study::Cluster => {
            let r = cluster_reference(full, size);
            let w = try_resolve(&r).map_err(|e| {
                UsageError::new(format!("--study cluster needs the files workload: {e}"))
            })?;
            Ok(vec![w])
        }
        Study::LinuxFs => {
            let copy = linux_fs_copy_reference(size);
            if let Ok(w) = try_resolve(&copy) {
                notes.push(format!("study linux-fs: data-set copy workload {copy}"));
                return Ok(vec![w]);
            }
            let mut out = Vec::new();
            let files = "files:sizes=1,4K,64K:files-per-portion=1000:portions=2:passes=1:repeat=1";
            match try_resolve(files) {
                Ok(w) => out.push(w),
                Err(e) => notes.push(format!("study linux-fs: no small-file workload ({e})")),
            }
            out.push(try_resolve("run:preset=real:duration=5s:repeat=1")?);
            notes.push(format!(
                "study linux-fs: the copy workload is not available; using {}",
                out.iter()
                    .map(|w| w.label.clone())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_reference_scales_the_big_file_to_the_image() {
        for (full, size, counts, big) in [
            (
                false,
                1u64 << 30,
                "files-per-portion=1000:portions=2:passes=1",
                "big=128M",
            ),
            (
                true,
                4 << 30,
                "files-per-portion=10000:portions=20:passes=16",
                "big=2048M",
            ),
        ] {
            let r = cluster_reference(full, size);
            assert!(r.contains(counts) && r.contains(big), "full {full}: {r}");
        }
    }

    /// fusefat looks through the whole directory for every new name: the quick cluster
    /// study's 2,000 files in each of 10 directories take over an hour per configuration and
    /// run; the full study's 3.2 million in one directory cannot be made on FAT at all; a
    /// run workload, or a files workload of a few hundred files, gets no note.
    #[test]
    fn fusefat_notes_give_a_floor_of_the_time_and_the_directory_limit() {
        let vfat = ["vfat 4KiB".to_string()];
        let study = |full| workloads(Study::Cluster, full, 4 << 30, &mut Vec::new()).unwrap();
        let one = |r: &str| vec![try_resolve(r).unwrap()];
        // (workloads, the matrix's runs, what the one note says)
        let cases: [(Vec<WorkloadPlan>, u32, &[&str]); 5] = [
            (
                study(false),
                1,
                &[
                    "(vfat 4KiB)",
                    "2,000 files in each of 10 directories a run",
                    "at least 67 minutes per configuration over 1 run(s)",
                ],
            ),
            (
                study(false),
                3,
                &["at least 3.3 hours per configuration over 3 run(s)"],
            ),
            (
                study(true),
                1,
                &[
                    "puts 3,200,000 files in one directory",
                    "holds at most 65,534",
                ],
            ),
            // The files command's quick preset on its default four sizes, 3 runs within
            // each of the matrix's 3: 5,000 files in each directory.
            (
                one("files"),
                3,
                &["5,000 files in each of 4 directories", "over 9 run(s)"],
            ),
            (
                one("files:sizes=4K:files-per-portion=300"),
                3,
                &[
                    "(3,000 files in one directory a run)",
                    "at least 2.2 hours per configuration over 9 run(s)",
                ],
            ),
        ];
        for (ws, runs, says) in &cases {
            let notes = fusefat_notes(ws, *runs, &vfat);
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(
                says.iter().all(|x| notes[0].contains(x)),
                "{says:?}: {notes:?}"
            );
        }
        let small = [
            try_resolve("files:sizes=4K:files-per-portion=100:repeat=1").unwrap(),
            try_resolve("run:preset=real:duration=1s").unwrap(),
        ];
        assert!(fusefat_notes(&small, 3, &vfat).is_empty());
        // Writers in directories of their own fill them side by side; in one shared
        // directory, one directory of all their files.
        let own = try_resolve("files:sizes=4K:jobs=4:repeat=1").unwrap();
        let shared = try_resolve("files:sizes=4K:jobs=4:shared-dir=true:repeat=1").unwrap();
        let (own, shared) = (
            own.workload.file_making().unwrap(),
            shared.workload.file_making().unwrap(),
        );
        assert_eq!((own.directories, own.files_per_directory), (4, 5_000));
        assert_eq!(
            (shared.directories, shared.files_per_directory),
            (1, 20_000)
        );
        assert!(shared.fusefat_seconds() > 3.0 * own.fusefat_seconds());
    }

    #[test]
    fn linux_fs_uses_what_exists_and_says_so() {
        let mut notes = Vec::new();
        let w = workloads(Study::LinuxFs, false, 4 << 30, &mut notes).unwrap();
        assert!(!w.is_empty());
        let labels: Vec<&str> = w.iter().map(|w| w.label.as_str()).collect();
        // Either the data-set copy (once built) or the fallback ending with `iolab run`.
        assert!(
            labels[0].starts_with("copy") || labels.last().unwrap().starts_with("run:"),
            "{labels:?}"
        );
        assert!(
            notes.iter().any(|n| n.contains("study linux-fs")),
            "{notes:?}"
        );
    }

    #[test]
    fn linux_fs_copy_fits_the_image() {
        assert_eq!(
            linux_fs_copy_reference(1 << 30),
            "copy:dataset=media-mix:scale=0.212:repeat=1:ceiling=true"
        );
        assert!(linux_fs_copy_reference(64 << 30).contains("scale=1.000"));
    }
}
