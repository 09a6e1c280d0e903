//! One module per subcommand: its `cli::Execute` (what app.rs runs) and, for a measuring
//! one, its `family::Family` (the glue between its checked config, the runners and the
//! reports, run by the one path `family::execute`). Here too: the matrix's families by
//! name ([`resolve`]).

pub mod age;
pub mod compare;
pub mod copy;
pub mod family;
pub mod files;
pub mod files_jobs;
pub mod history;
pub mod info;
pub mod matrix;
pub mod report;
pub mod run;
pub mod saturate;
pub mod serve;
pub mod slack;
pub mod sustain;
pub mod trace;
pub mod workloads;

use crate::error::UsageError;
use crate::workload::WorkloadRef;
use family::DirWorkload;
use workloads::on_dir;

/// The matrix's workload families by name (`FAMILY:KEY=VALUE...`): a family that runs in
/// the matrix (`family::DirFamily`) adds its line here, next to its module.
pub fn resolve(r: &WorkloadRef) -> Result<Box<dyn DirWorkload>, UsageError> {
    match r.family.as_str() {
        "run" => on_dir::<run::RunFamily>(&r.params),
        "files" => on_dir::<files::FilesFamily>(&r.params),
        "copy" => on_dir::<copy::CopyFamily>(&r.params),
        "trace" => on_dir::<trace::TraceFamily>(&r.params),
        other => Err(UsageError::new(format!(
            "unknown workload family '{other}' (known: run, files, copy, trace)"
        ))),
    }
}
