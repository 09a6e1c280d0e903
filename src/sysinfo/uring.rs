//! Whether the kernel's io_uring is usable here, with the opcodes iolab's engine uses: a
//! fact of the system, recorded in every result's environment and checked by the engine
//! before it builds a ring.

use io_uring::{IoUring, Probe, opcode};

/// Check that io_uring works and supports the opcodes we use.
pub fn probe() -> Result<String, String> {
    let ring = IoUring::new(2).map_err(|e| format!("io_uring_setup failed: {e}"))?;
    let mut p = Probe::new();
    ring.submitter()
        .register_probe(&mut p)
        .map_err(|e| format!("io_uring probe failed: {e}"))?;
    let mut missing = Vec::new();
    for (name, code) in [
        ("READ_FIXED", opcode::ReadFixed::CODE),
        ("WRITE_FIXED", opcode::WriteFixed::CODE),
        ("READ", opcode::Read::CODE),
        ("WRITE", opcode::Write::CODE),
    ] {
        if !p.is_supported(code) {
            missing.push(name);
        }
    }
    if missing.contains(&"READ") || missing.contains(&"WRITE") {
        return Err(format!("io_uring lacks {}", missing.join(", ")));
    }
    if missing.is_empty() {
        Ok("available (READ/WRITE, READ_FIXED/WRITE_FIXED)".into())
    } else {
        Ok(format!("available without {}", missing.join(", ")))
    }
}
