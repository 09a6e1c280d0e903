//! The one thing the kernel's tracepoints do not give: the strings behind user pointers
//! (the path of `openat`, `unlink`, `rename`, ...) and the file offset of an io_uring
//! request. A tiny BPF program per tracepoint copies them out: it is assembled here, at
//! run time, from a handful of instructions (no compiler, no BPF object in the repository),
//! loaded with the `bpf` system call, attached to the tracepoint through a perf event and
//! writes one record per hit into per-CPU perf ring buffers. Records are matched to the
//! tracepoint events in userspace by thread and order; the program does not filter by
//! process, so other processes' records are read and dropped.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_MAP_TYPE_PERF_EVENT_ARRAY: u32 = 4;
const BPF_PROG_TYPE_TRACEPOINT: u32 = 5;

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_COUNT_SW_BPF_OUTPUT: u64 = 10;
const PERF_SAMPLE_RAW: u64 = 1 << 10;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;
const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_SAMPLE: u32 = 9;

const HELPER_KTIME_GET_NS: i32 = 5;
const HELPER_GET_CURRENT_PID_TGID: i32 = 14;
const HELPER_PERF_EVENT_OUTPUT: i32 = 25;
const HELPER_PROBE_READ_KERNEL: i32 = 113;
const HELPER_PROBE_READ_USER_STR: i32 = 114;

/// Bytes kept of each string (two fit in the 512-byte BPF stack with the header).
pub const STR_LEN: usize = 232;
const HEADER: usize = 32;
const FRAME: i16 = (HEADER + 2 * STR_LEN) as i16;

/// What a program copies from its tracepoint's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetch {
    /// Up to two user strings whose pointers are at these offsets of the record.
    UserStrings(u16, Option<u16>),
    /// The u64 at `ptr + add`, where `ptr` is the kernel pointer at offset `field`.
    KernelU64 { field: u16, add: i16 },
}

/// One record from a program: who, when (CLOCK_MONOTONIC), which attachment (`tag`), and
/// the fetched value (strings: the first string's user pointer) or strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub tgid: u32,
    pub tid: u32,
    pub ts_ns: u64,
    pub tag: u32,
    pub value: u64,
    pub strings: [String; 2],
}

#[derive(Clone, Copy)]
struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: (src << 4) | (dst & 0xf),
        off,
        imm,
    }
}

/// The program: header (pid_tgid, ktime, tag, value), the fetches, one perf output.
fn program(fetch: Fetch, tag: u32, map_fd: i32) -> Vec<Insn> {
    let mov_reg = |d, s| insn(0xbf, d, s, 0, 0);
    let mov_imm = |d, i| insn(0xb7, d, 0, 0, i);
    let add_imm = |d, i| insn(0x07, d, 0, 0, i);
    let call = |h| insn(0x85, 0, 0, 0, h);
    let stx_dw = |off, s| insn(0x7b, 10, s, off, 0);
    let st_dw = |off, i| insn(0x7a, 10, 0, off, i);
    let ldx_dw = |d, s, off| insn(0x79, d, s, off, 0);
    let mut p = vec![
        mov_reg(6, 1),
        call(HELPER_GET_CURRENT_PID_TGID),
        stx_dw(-FRAME, 0),
        call(HELPER_KTIME_GET_NS),
        stx_dw(-FRAME + 8, 0),
        st_dw(-FRAME + 16, tag as i32),
        st_dw(-FRAME + 24, 0),
    ];
    let size = match fetch {
        Fetch::KernelU64 { field, add } => {
            p.extend([
                mov_reg(1, 10),
                add_imm(1, (-FRAME + 24) as i32),
                mov_imm(2, 8),
                ldx_dw(3, 6, field as i16),
                add_imm(3, add as i32),
                call(HELPER_PROBE_READ_KERNEL),
            ]);
            HEADER
        }
        Fetch::UserStrings(a, b) => {
            let mut n = 0;
            for off in std::iter::once(a).chain(b) {
                let at = -FRAME + (HEADER + n * STR_LEN) as i16;
                p.extend([
                    mov_reg(1, 10),
                    add_imm(1, at as i32),
                    mov_imm(2, STR_LEN as i32),
                    ldx_dw(3, 6, off as i16),
                ]);
                if n == 0 {
                    // The first string's user pointer goes in `value`: the event carries
                    // it too, so records are matched to their call, not just by order.
                    p.push(stx_dw(-FRAME + 24, 3));
                }
                p.push(call(HELPER_PROBE_READ_USER_STR));
                n += 1;
            }
            HEADER + n * STR_LEN
        }
    };
    p.extend([
        mov_reg(1, 6),
        // ld_imm64 r2 = map (BPF_PSEUDO_MAP_FD), two instruction slots.
        insn(0x18, 2, 1, 0, map_fd),
        insn(0, 0, 0, 0, 0),
        // r3 = BPF_F_CURRENT_CPU (0xffffffff, a 32-bit move so it is not sign-extended).
        insn(0xb4, 3, 0, 0, -1),
        mov_reg(4, 10),
        add_imm(4, -FRAME as i32),
        mov_imm(5, size as i32),
        call(HELPER_PERF_EVENT_OUTPUT),
        mov_imm(0, 0),
        insn(0x95, 0, 0, 0, 0),
    ]);
    p
}

fn bpf(cmd: libc::c_long, attr: &mut [u8; 128]) -> io::Result<i32> {
    // SAFETY: attr is a zero-filled bpf_attr of the layout `cmd` expects, larger than the
    // kernel reads for these commands.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len() as u32) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as i32)
    }
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_ne_bytes());
}

/// perf_event_open with a PERF_ATTR_SIZE_VER5 attribute. Readers are woken only when
/// `wakeup_bytes` are waiting (the `watermark` flag): iolab polls, and a wakeup per record
/// is an inter-processor interrupt (a VM exit under a hypervisor) that the traced program
/// would pay on every path call.
fn perf_open(
    kind: u32,
    config: u64,
    sample_type: u64,
    cpu: i32,
    wakeup_bytes: u32,
) -> io::Result<OwnedFd> {
    let mut attr = [0u8; 128];
    put32(&mut attr, 0, kind);
    put32(&mut attr, 4, 112);
    put64(&mut attr, 8, config);
    put64(&mut attr, 16, 1); // sample_period
    put64(&mut attr, 24, sample_type);
    put64(&mut attr, 40, 1 | (1 << 14)); // flags: disabled, watermark
    put32(&mut attr, 48, wakeup_bytes); // wakeup_watermark
    // SAFETY: attr is a valid perf_event_attr (size 112) that outlives the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            -1 as libc::pid_t,
            cpu,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn ioctl(fd: &OwnedFd, req: libc::c_ulong, arg: libc::c_ulong) -> io::Result<()> {
    // SAFETY: perf ioctls with an integer argument on a perf event descriptor.
    if unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// One CPU's perf ring buffer (BPF output).
struct Ring {
    fd: OwnedFd,
    base: *mut u8,
    len: usize,
    data_len: usize,
}

// SAFETY: the mapping belongs to this value alone and is only touched through &mut self.
unsafe impl Send for Ring {}

impl Ring {
    fn new(cpu: i32, pages: usize) -> io::Result<Ring> {
        let page = 4096;
        let fd = perf_open(
            PERF_TYPE_SOFTWARE,
            PERF_COUNT_SW_BPF_OUTPUT,
            PERF_SAMPLE_RAW,
            cpu,
            (pages * page / 2) as u32,
        )?;
        let len = (pages + 1) * page;
        // SAFETY: mapping a perf event's ring buffer (1 + 2^n pages) as perf_event_open(2) says.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        ioctl(&fd, PERF_EVENT_IOC_ENABLE, 0)?;
        Ok(Ring {
            fd,
            base: base as *mut u8,
            len,
            data_len: pages * page,
        })
    }

    /// Append every record written since the last call; returns records lost by the kernel.
    fn drain(&mut self, out: &mut Vec<Record>) -> u64 {
        // SAFETY: data_head (offset 1024) and data_tail (1032) of the mapped control page;
        // head is read with acquire, tail written with release, as perf_event_open(2) says.
        let (head_p, tail_p) = unsafe {
            (
                &*(self.base.add(1024) as *const std::sync::atomic::AtomicU64),
                &*(self.base.add(1032) as *const std::sync::atomic::AtomicU64),
            )
        };
        let head = head_p.load(std::sync::atomic::Ordering::Acquire);
        let mut tail = tail_p.load(std::sync::atomic::Ordering::Relaxed);
        let mut lost = 0;
        // SAFETY: the data area follows the control page and is data_len bytes long.
        let data = unsafe { std::slice::from_raw_parts(self.base.add(4096), self.data_len) };
        let read = |from: u64, n: usize| -> Vec<u8> {
            (0..n)
                .map(|i| data[((from as usize) + i) % data.len()])
                .collect()
        };
        while tail < head {
            let h = read(tail, 8);
            let kind = u32::from_ne_bytes(h[0..4].try_into().expect("4 bytes"));
            let size = u16::from_ne_bytes(h[6..8].try_into().expect("2 bytes")) as usize;
            if size < 8 {
                break;
            }
            let body = read(tail + 8, size - 8);
            match kind {
                PERF_RECORD_SAMPLE if body.len() >= 4 => {
                    let n = u32::from_ne_bytes(body[0..4].try_into().expect("4 bytes")) as usize;
                    if let Some(r) = body.get(4..4 + n).and_then(parse_record) {
                        out.push(r);
                    }
                }
                PERF_RECORD_LOST if body.len() >= 16 => {
                    lost += u64::from_ne_bytes(body[8..16].try_into().expect("8 bytes"));
                }
                _ => {}
            }
            tail += size as u64;
        }
        tail_p.store(tail, std::sync::atomic::Ordering::Release);
        let _ = &self.fd;
        lost
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping made in `new`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// CPUs the kernel may bring online (`/sys/devices/system/cpu/possible`, e.g. `0-3`).
fn possible_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| {
            s.trim()
                .split(',')
                .filter_map(|r| r.rsplit('-').next()?.parse::<usize>().ok())
                .max()
        })
        .map(|m| m + 1)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn parse_record(b: &[u8]) -> Option<Record> {
    let u64_at = |at: usize| -> Option<u64> {
        Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
    };
    let pid_tgid = u64_at(0)?;
    let text = |at: usize| -> String {
        let s = b.get(at..(at + STR_LEN).min(b.len())).unwrap_or(&[]);
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        crate::workload::trace::tracefile::path_text(&s[..end])
    };
    Some(Record {
        tgid: (pid_tgid >> 32) as u32,
        tid: pid_tgid as u32,
        ts_ns: u64_at(8)?,
        tag: u64_at(16)? as u32,
        value: u64_at(24)?,
        strings: [text(HEADER), text(HEADER + STR_LEN)],
    })
}

/// The loaded programs, their attachments and the per-CPU output rings.
pub struct Fetcher {
    map: OwnedFd,
    rings: Vec<Ring>,
    /// Program and perf-event descriptors: closing them detaches the programs.
    attached: Vec<(OwnedFd, OwnedFd)>,
    pub lost: u64,
}

impl Fetcher {
    /// The output map and one ring of `pages` pages per possible CPU.
    pub fn new(pages: usize) -> io::Result<Fetcher> {
        let cpus = possible_cpus();
        let mut attr = [0u8; 128];
        put32(&mut attr, 0, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
        put32(&mut attr, 4, 4);
        put32(&mut attr, 8, 4);
        put32(&mut attr, 12, cpus as u32);
        // SAFETY: a new descriptor from BPF_MAP_CREATE, owned here.
        let map = unsafe { OwnedFd::from_raw_fd(bpf(BPF_MAP_CREATE, &mut attr)?) };
        let mut rings = Vec::new();
        for cpu in 0..cpus as i32 {
            // An offline CPU has no event; its slot stays empty (nothing runs there).
            let Ok(ring) = Ring::new(cpu, pages) else {
                continue;
            };
            let key = cpu as u32;
            let value = ring.fd.as_raw_fd() as u32;
            let mut attr = [0u8; 128];
            put32(&mut attr, 0, map.as_raw_fd() as u32);
            put64(&mut attr, 8, &key as *const u32 as u64);
            put64(&mut attr, 16, &value as *const u32 as u64);
            bpf(BPF_MAP_UPDATE_ELEM, &mut attr)?;
            rings.push(ring);
        }
        Ok(Fetcher {
            map,
            rings,
            attached: Vec::new(),
            lost: 0,
        })
    }

    /// Load a program doing `fetch` with `tag` and attach it to tracepoint `id`.
    pub fn attach(&mut self, tracepoint_id: u64, fetch: Fetch, tag: u32) -> io::Result<()> {
        let insns = program(fetch, tag, self.map.as_raw_fd());
        let raw: Vec<u64> = insns
            .iter()
            .map(|i| {
                (i.code as u64)
                    | ((i.regs as u64) << 8)
                    | ((i.off as u16 as u64) << 16)
                    | ((i.imm as u32 as u64) << 32)
            })
            .collect();
        // GPL-compatible: bpf_probe_read_user_str and bpf_perf_event_output are GPL-only.
        let license = CString::new("Dual MIT/GPL").expect("no NUL");
        let mut log = vec![0u8; 1 << 16];
        let mut attr = [0u8; 128];
        put32(&mut attr, 0, BPF_PROG_TYPE_TRACEPOINT);
        put32(&mut attr, 4, raw.len() as u32);
        put64(&mut attr, 8, raw.as_ptr() as u64);
        put64(&mut attr, 16, license.as_ptr() as u64);
        put32(&mut attr, 24, 1); // log_level
        put32(&mut attr, 28, log.len() as u32);
        put64(&mut attr, 32, log.as_mut_ptr() as u64);
        let prog = match bpf(BPF_PROG_LOAD, &mut attr) {
            // SAFETY: a new descriptor from BPF_PROG_LOAD, owned here.
            Ok(fd) => unsafe { OwnedFd::from_raw_fd(fd) },
            Err(e) => {
                let end = log.iter().position(|&c| c == 0).unwrap_or(0);
                let text = String::from_utf8_lossy(&log[..end]);
                let last = text.lines().rev().take(3).collect::<Vec<_>>().join(" / ");
                return Err(io::Error::new(
                    e.kind(),
                    format!("BPF program rejected: {e} ({last})"),
                ));
            }
        };
        let ev = perf_open(
            PERF_TYPE_TRACEPOINT,
            tracepoint_id,
            PERF_SAMPLE_RAW,
            0,
            1 << 20,
        )?;
        ioctl(
            &ev,
            PERF_EVENT_IOC_SET_BPF,
            prog.as_raw_fd() as libc::c_ulong,
        )?;
        ioctl(&ev, PERF_EVENT_IOC_ENABLE, 0)?;
        self.attached.push((prog, ev));
        Ok(())
    }

    /// Every record written since the last call.
    pub fn drain(&mut self, out: &mut Vec<Record>) {
        for r in &mut self.rings {
            self.lost += r.drain(out);
        }
    }

    /// Detach the programs (the rings stay readable). Each detach waits for an RCU grace
    /// period (60-90 ms measured on the development VM): done in parallel, the 19 take one.
    pub fn detach(&mut self) {
        let all = std::mem::take(&mut self.attached);
        std::thread::scope(|sc| {
            for pair in all {
                sc.spawn(move || drop(pair));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_decode() {
        let mut b = vec![0u8; HEADER + 2 * STR_LEN];
        b[0..8].copy_from_slice(&((7u64 << 32) | 9).to_ne_bytes());
        b[8..16].copy_from_slice(&123u64.to_ne_bytes());
        b[16..24].copy_from_slice(&4u64.to_ne_bytes());
        b[HEADER..HEADER + 3].copy_from_slice(b"a/b");
        let r = parse_record(&b).unwrap();
        assert_eq!((r.tgid, r.tid, r.ts_ns, r.tag), (7, 9, 123, 4));
        assert_eq!(r.strings[0], "a/b");
        assert_eq!(r.strings[1], "");
    }

    #[test]
    fn program_ends_with_exit_and_fits_the_stack() {
        let p = program(Fetch::UserStrings(24, Some(40)), 1, 3);
        assert_eq!(p.last().unwrap().code, 0x95);
        assert!(FRAME as usize <= 512);
    }
}
