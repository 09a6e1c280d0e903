//! Clock honesty across ranks: each rank's wall clock is compared with rank 0's by ping-pong
//! (the NTP estimate: the rank's time minus the midpoint of rank 0's send and receive, from
//! the round trip with the shortest time, whose error is at most half that round trip).
//! Rank 0 subtracts the offsets from the times ranks report, so windows share one clock.

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::dist::ClockOffset;

/// Round trips per rank; the shortest one is used.
pub const ROUNDS: u32 = 16;

const TAG_PING: i32 = 0x1c10;
const TAG_PONG: i32 = 0x1c11;

/// Wall-clock time in ns since the epoch (CLOCK_REALTIME: comparable across hosts, unlike
/// the monotonic clock, once the offsets are corrected).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Collective: on rank 0, the offset of every rank (index = rank; rank 0's is zero); an
/// empty list on the other ranks.
pub fn measure_offsets(world: &SimpleCommunicator) -> Vec<ClockOffset> {
    let rank = world.rank();
    let size = world.size();
    if rank != 0 {
        let root = world.process_at_rank(0);
        for _ in 0..ROUNDS {
            let (_, _) = root.receive_with_tag::<u8>(TAG_PING);
            root.send_with_tag(&now_ns(), TAG_PONG);
        }
        return Vec::new();
    }
    let mut out = vec![ClockOffset::default(); size as usize];
    for (k, slot) in out.iter_mut().enumerate().skip(1) {
        let peer = world.process_at_rank(k as i32);
        let mut best: Option<ClockOffset> = None;
        for _ in 0..ROUNDS {
            let t0 = now_ns();
            peer.send_with_tag(&1u8, TAG_PING);
            let (tk, _) = peer.receive_with_tag::<i64>(TAG_PONG);
            let t1 = now_ns();
            let est = ClockOffset {
                offset_ns: tk - (t0 + (t1 - t0) / 2),
                rtt_ns: t1 - t0,
            };
            if best.is_none_or(|b| est.rtt_ns < b.rtt_ns) {
                best = Some(est);
            }
        }
        *slot = best.unwrap_or_default();
    }
    out
}
