//! Data verification (`--verify`): every 512-byte sector written carries a header (offset,
//! run id, sequence number) and an xxh3 checksum of the rest of the sector; every read checks
//! them. A mismatch names the offset, what was expected and what was read.
//!
//! Sector layout: `[0..8)` xxh3-64 of bytes `[8..512)`; `[8..12)` magic "IOLB"; `[12..16)` run
//! id (derived from `--seed`, so a later `iolab run --seed S --prefill false --verify` can check
//! data written earlier with the same seed); `[16..24)` the sector's byte offset; `[24..32)`
//! the write's sequence number; `[32..512)` random payload.

use xxhash_rust::xxh3::xxh3_64;

use crate::engine::buffer::splitmix;

pub const SECTOR: usize = 512;
const MAGIC: [u8; 4] = *b"IOLB";

/// Seals written sectors and checks read ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verifier {
    pub run_id: u32,
}

/// What a failed check found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("data verification failed at offset {offset}: expected {expected}, read {found}")]
pub struct VerifyError {
    pub offset: u64,
    pub expected: String,
    pub found: String,
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

impl Verifier {
    pub fn from_seed(seed: u64) -> Verifier {
        Verifier {
            run_id: splitmix(seed ^ 0x5645_5249_4659) as u32,
        }
    }

    /// Write headers and checksums into every sector of `buf` (written at `offset`).
    pub fn seal(&self, buf: &mut [u8], offset: u64, seq: u64) {
        for (i, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
            s[8..12].copy_from_slice(&MAGIC);
            s[12..16].copy_from_slice(&self.run_id.to_le_bytes());
            s[16..24].copy_from_slice(&(offset + (i * SECTOR) as u64).to_le_bytes());
            s[24..32].copy_from_slice(&seq.to_le_bytes());
            let sum = xxh3_64(&s[8..]);
            s[0..8].copy_from_slice(&sum.to_le_bytes());
        }
    }

    /// Check every sector of `buf` (read from `offset`).
    pub fn check(&self, buf: &[u8], offset: u64) -> Result<(), VerifyError> {
        for (i, s) in buf.chunks_exact(SECTOR).enumerate() {
            let at = offset + (i * SECTOR) as u64;
            let stored = u64_at(s, 0);
            let computed = xxh3_64(&s[8..]);
            let magic_ok = s[8..12] == MAGIC;
            let hdr_off = u64_at(s, 16);
            let run = u32_at(s, 12);
            let wrong = |expected: String, found: String| {
                Err(VerifyError {
                    offset: at,
                    expected,
                    found,
                })
            };
            if !magic_ok {
                return wrong(
                    "an iolab sector header (magic \"IOLB\")".into(),
                    format!("bytes {}", hex(&s[..16])),
                );
            }
            if stored != computed {
                return wrong(
                    format!("checksum {stored:016x} (stored in the sector)"),
                    format!("data whose checksum is {computed:016x} (the sector was corrupted)"),
                );
            }
            if hdr_off != at {
                return wrong(
                    format!("a sector written for offset {at}"),
                    format!("a sector written for offset {hdr_off} (misdirected or lost write)"),
                );
            }
            if run != self.run_id {
                return wrong(
                    format!("run id {:08x}", self.run_id),
                    format!("run id {run:08x} (data from another run or seed)"),
                );
            }
        }
        Ok(())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_data_checks_and_corruption_is_found() {
        let v = Verifier::from_seed(7);
        let mut buf = vec![0x5au8; 4096];
        v.seal(&mut buf, 8192, 3);
        assert_eq!(v.check(&buf, 8192), Ok(()));
        // Read back from the wrong place: misdirected.
        let e = v.check(&buf, 4096).unwrap_err();
        assert!(e.found.contains("offset 8192"), "{e}");
        // A flipped payload bit.
        let mut bad = buf.clone();
        bad[1000] ^= 1;
        let e = v.check(&bad, 8192).unwrap_err();
        assert_eq!(e.offset, 8192 + 512);
        assert!(e.found.contains("corrupted"), "{e}");
        // Zeros (a lost write on a trimmed device).
        let e = v.check(&vec![0u8; 512], 0).unwrap_err();
        assert!(e.expected.contains("IOLB"));
        // Another seed's data.
        let e = Verifier::from_seed(8).check(&buf, 8192).unwrap_err();
        assert!(e.found.contains("run id"));
    }
}
