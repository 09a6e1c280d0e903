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

/// Files fusefat creates per second in one directory once it holds a few hundred (4.8/s
/// from the 200th to the 400th empty file here; 25/s for the first 200): it searches the
/// whole directory for every new name, so each file costs more than the one before.
const FUSEFAT_FILES_PER_S: f64 = 5.0;

/// The files `--study cluster` creates on one configuration's fresh file system: every size,
/// every portion of every pass.
pub fn cluster_study_files(full: bool) -> u64 {
    let (n, portions, passes) = if full { FULL_COUNTS } else { QUICK_COUNTS };
    CLUSTER_SIZES.split(',').count() as u64 * n * portions * passes
}

/// The note for `--study cluster` on configurations mounted through fusefat (`labels`):
/// a lower bound of the create phase alone, made with the rate at a few hundred files (the
/// study's directories hold thousands, where fusefat is slower still).
pub fn fusefat_cluster_note(full: bool, runs: u32, labels: &[String]) -> String {
    let files = cluster_study_files(full);
    let secs = files as f64 / FUSEFAT_FILES_PER_S * runs.max(1) as f64;
    let took = if secs >= 2.0 * 86_400.0 {
        format!("{:.0} days", secs / 86_400.0)
    } else {
        format!("{:.1} hours", secs / 3_600.0)
    };
    format!(
        "study cluster on FAT32 through fusefat ({}): fusefat creates about {FUSEFAT_FILES_PER_S:.0} files/s in a directory of a few hundred, fewer as it grows, so the {} files of each run's create phase alone take at least {took} per configuration over {} run(s); leave fat32 out of --fs to avoid it",
        labels.join(", "),
        crate::units::fmt_thousands(files as f64),
        runs.max(1)
    )
}

/// The twelve-file-system copy test's media mix (about 2.03 GB) copied to the file system:
/// the data set and its copy must fit the image, so it is scaled to 40 % of the image each
/// (never above 1).
pub fn linux_fs_copy_reference(size: u64) -> String {
    const MEDIA_MIX_BYTES: f64 = 2_026_000_000.0;
    let size = size as f64;
    let scale = (0.4 * size / MEDIA_MIX_BYTES).min(1.0);
    format!("copy:dataset=media-mix:scale={scale:.3}:repeat=1")
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

    /// fusefat makes about 5 files/s in a directory of 500: the quick study's 20,000 files
    /// take over an hour per configuration and run, the full one's 32 million months.
    #[test]
    fn fusefat_cluster_study_is_estimated_in_hours() {
        assert_eq!(cluster_study_files(false), 20_000);
        assert_eq!(cluster_study_files(true), 32_000_000);
        let quick = fusefat_cluster_note(false, 3, &["vfat 4KiB".into()]);
        assert!(
            quick.contains("(vfat 4KiB)") && quick.contains("20,000 files"),
            "{quick}"
        );
        assert!(
            quick.contains("at least 3.3 hours per configuration over 3 run(s)"),
            "{quick}"
        );
        let full = fusefat_cluster_note(true, 1, &["vfat".into()]);
        assert!(full.contains("at least 74 days"), "{full}");
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
            "copy:dataset=media-mix:scale=0.212:repeat=1"
        );
        assert!(linux_fs_copy_reference(64 << 30).contains("scale=1.000"));
    }
}
