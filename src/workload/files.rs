//! The `files` workload family: Belov's small-file tester (NTFS cluster sizes). Copies of a
//! reference file kept in RAM are written in portions x passes, each portion timed on its own, then
//! stat'ed, read back and deleted; sizes may be given relative to the allocation unit.
//! `parse_reference` lets the matrix run it on every file system it formats.

pub mod big;
pub mod config;
pub mod engine;
pub mod result;
pub mod run;
pub mod scaling;
pub mod sizes;
pub mod space;

/// How each file is written from the reference kept in RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// open(O_CREAT|O_EXCL), write, close: the Linux equivalent of CopyFile.
    Write,
    /// copy_file_range(2) from the reference (a memfd; a file on the target when the kernel
    /// refuses cross-file-system copies).
    CopyFileRange,
    /// sendfile(2) from the reference in a memfd.
    Sendfile,
}

/// When data is forced to the device; sync time is always reported separately.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Never: the page cache decides.
    None,
    /// fsync(2) every file before closing it.
    File,
    /// syncfs(2) after every portion.
    Portion,
    /// One syncfs(2) at the end of the create phase.
    End,
}

/// Where the files go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// All files of a run in one directory (directory scaling is measured).
    Flat,
    /// One directory per portion.
    PerPortion,
    /// One directory per pass.
    PerPass,
}

/// Counts preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilesPreset {
    /// 500 files per portion x 5 portions x 2 passes x 3 runs: about a minute.
    Quick,
    /// Belov's counts: 10,000 files per portion x 20 portions x 16 passes x 3 runs.
    Full,
}

#[cfg(test)]
mod tests {}
