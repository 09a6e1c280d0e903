//! From the instance's text (`trace_pipe`, one event a line) and the BPF records to lines in
//! strace's shape (`fd</path>` annotations), which `strace::parse_lines` turns into calls:
//! per process descriptor tables and working directories, enter/exit pairs per thread,
//! io_uring requests followed from submission (offset from BPF) through `file_get` (fd) to
//! completion (bytes). Pure: fed text and records, it needs no kernel and is unit-tested.

use std::collections::{HashMap, VecDeque};

use super::bpf::Record;
use crate::workload::trace::strace_line::Line;

/// One parsed line of the trace text.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub tid: u32,
    pub tgid: u32,
    pub ts_ns: u64,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `sys_NAME(a: 1, b: 0x2)`: the argument values in order.
    Enter(String, Vec<u64>),
    /// `sys_NAME -> 0x3`.
    Exit(String, i64),
    Submit {
        ring: u64,
        req: u64,
        opcode: String,
    },
    FileGet {
        req: u64,
        fd: i64,
    },
    Complete {
        req: u64,
        res: i64,
    },
}

fn hex(s: &str) -> Option<u64> {
    let s = s.trim();
    u64::from_str_radix(s.strip_prefix("0x").unwrap_or(s), 16).ok()
}

/// `name a, name b, ...` fields of an io_uring event.
fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    body.split(", ")
        .flat_map(|p| {
            p.split(' ')
                .collect::<Vec<_>>()
                .windows(2)
                .map(|w| (w[0], w[1]))
                .collect::<Vec<_>>()
        })
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// Parse one line of trace text (`comm-tid (tgid) [cpu] flags secs.usecs: event: body`).
pub fn parse(line: &str) -> Option<Event> {
    let close = line.find(") [")?;
    let open = line[..close].rfind(" (")?;
    let tgid = line[open + 2..close].trim().parse().ok()?;
    let tid = line[..open].trim_end().rsplit_once('-')?.1.parse().ok()?;
    let rest = &line[close + 3..];
    let rest = rest.split_once(']')?.1.trim_start();
    let rest = rest.split_once(' ')?.1.trim_start(); // flags
    let (ts, body) = rest.split_once(": ")?;
    let (secs, usecs) = ts.split_once('.')?;
    let ts_ns = secs.parse::<u64>().ok()? * 1_000_000_000 + usecs.parse::<u64>().ok()? * 1000;
    let kind = if let Some(sys) = body.strip_prefix("sys_") {
        if let Some((name, ret)) = sys.split_once(" -> ") {
            Kind::Exit(name.to_string(), hex(ret)? as i64)
        } else {
            let (name, args) = sys.split_once('(')?;
            let args = args.trim_end().strip_suffix(')')?;
            let vals = args
                .split(", ")
                .filter(|a| !a.is_empty())
                .map(|a| a.rsplit_once(": ").and_then(|(_, v)| hex(v)).unwrap_or(0))
                .collect();
            Kind::Enter(name.to_string(), vals)
        }
    } else {
        let (event, body) = body.split_once(": ")?;
        let req = || field(body, "req").and_then(|v| hex(v.trim_end_matches(',')));
        match event {
            "io_uring_submit_req" => Kind::Submit {
                ring: field(body, "ring").and_then(|v| hex(v.trim_end_matches(',')))?,
                req: req()?,
                opcode: field(body, "opcode")?.trim_end_matches(',').to_string(),
            },
            "io_uring_file_get" => Kind::FileGet {
                req: req()?,
                fd: field(body, "fd")?.trim_end_matches(',').parse().ok()?,
            },
            "io_uring_complete" => Kind::Complete {
                req: req()?,
                res: field(body, "result")?.trim_end_matches(',').parse().ok()?,
            },
            _ => return None,
        }
    };
    Some(Event {
        tid,
        tgid,
        ts_ns,
        kind,
    })
}

/// The syscalls recorded: their tracepoint name (`sys_enter_NAME`) and the fields holding
/// user strings (paths), which a BPF program copies out.
pub const SYSCALLS: &[(&str, &[&str])] = &[
    ("open", &["filename"]),
    ("creat", &["pathname"]),
    ("openat", &["filename"]),
    ("openat2", &["filename"]),
    ("close", &[]),
    ("read", &[]),
    ("write", &[]),
    ("readv", &[]),
    ("writev", &[]),
    ("pread64", &[]),
    ("pwrite64", &[]),
    ("preadv", &[]),
    ("pwritev", &[]),
    ("preadv2", &[]),
    ("pwritev2", &[]),
    ("lseek", &[]),
    ("dup", &[]),
    ("dup2", &[]),
    ("dup3", &[]),
    ("fcntl", &[]),
    ("fsync", &[]),
    ("fdatasync", &[]),
    ("newstat", &["filename"]),
    ("newlstat", &["filename"]),
    ("newfstat", &[]),
    ("newfstatat", &["filename"]),
    ("statx", &["filename"]),
    ("unlink", &["pathname"]),
    ("unlinkat", &["pathname"]),
    ("rmdir", &["pathname"]),
    ("mkdir", &["pathname"]),
    ("mkdirat", &["pathname"]),
    ("rename", &["oldname", "newname"]),
    ("renameat", &["oldname", "newname"]),
    ("renameat2", &["oldname", "newname"]),
    ("truncate", &["path"]),
    ("ftruncate", &[]),
    ("copy_file_range", &[]),
    ("sendfile64", &[]),
    ("clone", &[]),
    ("clone3", &[]),
    ("fork", &[]),
    ("vfork", &[]),
    ("chdir", &["filename"]),
    ("fchdir", &[]),
    // Not followed (no tracepoint carries io_submit's requests): seen, so that the
    // recording can say the trace lacks that I/O.
    ("io_setup", &[]),
];

/// Position of a syscall's first string argument (the path) among its arguments, in the
/// order of its tracepoint's fields, which the event text prints.
fn path_arg(syscall: &str) -> usize {
    match syscall {
        "openat" | "openat2" | "newfstatat" | "statx" | "unlinkat" | "mkdirat" | "renameat"
        | "renameat2" => 1,
        _ => 0,
    }
}

/// BPF tag of the io_uring submission record (syscalls use their index in [`SYSCALLS`]).
pub const TAG_URING_SUBMIT: u32 = 1000;

const AT_FDCWD: i32 = -100;
/// fcntl commands that duplicate a descriptor.
const F_DUPFD: u64 = 0;
const F_DUPFD_CLOEXEC: u64 = 1030;

/// What the conversion made and what it could not place.
#[derive(Debug, Default)]
pub struct Converted {
    pub(in crate::workload::trace) lines: Vec<Line>,
    /// io_uring reads/writes whose file was not known (registered files, a missed event).
    pub uring_unplaced: u64,
    /// Path syscalls whose BPF string record was missing (the path is unknown).
    pub missing_strings: u64,
    /// io_uring reads/writes whose BPF offset record was missing (kept at offset 0).
    pub missing_offsets: u64,
    /// Rings seen, in order of first use.
    pub rings: u32,
}

struct Pending {
    tgid: u32,
    ts: u64,
    name: String,
    args: Vec<u64>,
    strings: [String; 2],
}

struct Uring {
    tid: u32,
    tgid: u32,
    ts: u64,
    ring: u32,
    opcode: String,
    off: Option<u64>,
    fd: Option<i64>,
}

#[derive(Default)]
pub struct Converter {
    fds: HashMap<u32, HashMap<i32, String>>,
    cwd: HashMap<u32, String>,
    parent_of: HashMap<u32, u32>,
    pending: HashMap<u32, Pending>,
    records: HashMap<(u32, u32), VecDeque<Record>>,
    urings: HashMap<u64, Uring>,
    ring_ids: HashMap<u64, u32>,
    first_cwd: String,
    out: Converted,
}

fn quoted(p: &str) -> String {
    format!("\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\""))
}

fn open_flags(f: u64) -> String {
    let mut v = vec![match f & 3 {
        1 => "O_WRONLY",
        2 => "O_RDWR",
        _ => "O_RDONLY",
    }];
    for (bit, name) in [
        (0o100, "O_CREAT"),
        (0o200, "O_EXCL"),
        (0o1000, "O_TRUNC"),
        (0o2000, "O_APPEND"),
        (0o200000, "O_DIRECTORY"),
    ] {
        if f & bit != 0 {
            v.push(name);
        }
    }
    v.join("|")
}

impl Converter {
    /// `cwd`: the traced command's starting directory; `records`: every BPF record.
    pub fn new(cwd: &str, records: Vec<Record>) -> Converter {
        let mut c = Converter {
            first_cwd: cwd.to_string(),
            ..Default::default()
        };
        for r in records {
            c.records.entry((r.tid, r.tag)).or_default().push_back(r);
        }
        c
    }

    /// The BPF record of this thread's hit of `tag` at `ts` (µs text time vs ns BPF time;
    /// the two probes of one tracepoint hit can be apart by a preemption, hence the slack).
    /// With `ptr`, the record must carry that user pointer: a lost record then costs its
    /// own call's path, not every later one's.
    fn record(&mut self, tid: u32, tag: u32, ts: u64, ptr: Option<u64>) -> Option<Record> {
        let q = self.records.get_mut(&(tid, tag))?;
        // Wide: a loaded machine can preempt the thread between the two probes of one
        // hit (syscall tracepoints may fault and sleep); the pointer keeps matches exact.
        const SLACK: u64 = 100_000_000;
        while q.front().is_some_and(|r| r.ts_ns + SLACK < ts) {
            q.pop_front();
        }
        let i = q
            .iter()
            .take_while(|r| r.ts_ns <= ts + SLACK)
            .position(|r| ptr.is_none_or(|p| r.value == p))?;
        q.remove(i)
    }

    fn table(&mut self, tgid: u32) -> &mut HashMap<i32, String> {
        if !self.fds.contains_key(&tgid) {
            // A child often runs before its parent's clone returns: then its parent is the
            // process with a clone in progress (the latest to enter one).
            if !self.parent_of.contains_key(&tgid)
                && let Some(p) = self
                    .pending
                    .values()
                    .filter(|p| {
                        p.tgid != tgid
                            && matches!(p.name.as_str(), "clone" | "clone3" | "fork" | "vfork")
                    })
                    .max_by_key(|p| p.ts)
            {
                self.parent_of.insert(tgid, p.tgid);
            }
            let inherited = self
                .parent_of
                .get(&tgid)
                .and_then(|p| self.fds.get(p))
                .cloned()
                .unwrap_or_default();
            let cwd = self
                .parent_of
                .get(&tgid)
                .and_then(|p| self.cwd.get(p))
                .cloned()
                .unwrap_or_else(|| self.first_cwd.clone());
            self.cwd.insert(tgid, cwd);
            self.fds.insert(tgid, inherited);
        }
        self.fds.get_mut(&tgid).expect("just inserted")
    }

    fn fd_path(&mut self, tgid: u32, fd: u64) -> Option<String> {
        self.table(tgid).get(&(fd as u32 as i32)).cloned()
    }

    /// `new` is now a copy of `old` (dup, dup2, dup3, fcntl F_DUPFD[_CLOEXEC] returned it):
    /// it names what `old` names, or nothing when `old` is not a file we know (a terminal, a
    /// pipe). Whatever `new` named before is gone either way: dup2 closes it first. (A shell
    /// saves stdout with `fcntl(1, F_DUPFD, 10)`, points 1 at a file for `echo hi > f`, and
    /// restores it with `dup2(10, 1)`: keeping 1's old name there put the next `echo` to
    /// the terminal into `f`.)
    fn dup_fd(&mut self, tgid: u32, old: u64, new: i64) {
        let (old, new) = (old as u32 as i32, new as i32);
        if old == new {
            return;
        }
        let path = self.table(tgid).get(&old).cloned();
        let table = self.table(tgid);
        match path {
            Some(p) => table.insert(new, p),
            None => table.remove(&new),
        };
    }

    fn annotated(&mut self, tgid: u32, fd: u64) -> String {
        match self.fd_path(tgid, fd) {
            Some(p) => format!("{}<{p}>", fd as u32 as i32),
            None => format!("{}", fd as u32 as i32),
        }
    }

    /// Absolute path of `name` relative to directory descriptor `dfd` (or the cwd).
    fn resolve(&mut self, tgid: u32, dfd: Option<u64>, name: &str) -> Option<String> {
        if name.starts_with('/') {
            return Some(name.to_string());
        }
        self.table(tgid);
        let dir = match dfd.map(|d| d as u32 as i32) {
            None | Some(AT_FDCWD) => self.cwd.get(&tgid).cloned()?,
            Some(fd) => self.fds.get(&tgid)?.get(&fd).cloned()?,
        };
        Some(if name.is_empty() {
            dir
        } else {
            format!("{dir}/{name}")
        })
    }

    pub fn feed(&mut self, e: Event) {
        match e.kind {
            Kind::Enter(name, args) => {
                let idx = SYSCALLS.iter().position(|(n, _)| *n == name);
                let mut strings = [String::new(), String::new()];
                if let Some(i) = idx
                    && !SYSCALLS[i].1.is_empty()
                {
                    let ptr = args.get(path_arg(&name)).copied();
                    match self.record(e.tid, i as u32, e.ts_ns, ptr) {
                        Some(r) => strings = r.strings,
                        None => {
                            self.out.missing_strings += 1;
                            // Without its path the call cannot be placed: not kept.
                            self.pending.remove(&e.tid);
                            return;
                        }
                    }
                }
                self.pending.insert(
                    e.tid,
                    Pending {
                        tgid: e.tgid,
                        ts: e.ts_ns,
                        name,
                        args,
                        strings,
                    },
                );
            }
            Kind::Exit(name, ret) => {
                let Some(p) = self.pending.remove(&e.tid) else {
                    return;
                };
                if p.name != name {
                    return;
                }
                self.syscall(e.tid, e.tgid, p, ret, e.ts_ns);
            }
            Kind::Submit { ring, req, opcode } => {
                let n = self.ring_ids.len() as u32;
                let ring = *self.ring_ids.entry(ring).or_insert(n);
                self.out.rings = self.ring_ids.len() as u32;
                let off = self
                    .record(e.tid, TAG_URING_SUBMIT, e.ts_ns, None)
                    .map(|r| r.value);
                self.urings.insert(
                    req,
                    Uring {
                        tid: e.tid,
                        tgid: e.tgid,
                        ts: e.ts_ns,
                        ring,
                        opcode,
                        off,
                        fd: None,
                    },
                );
            }
            Kind::FileGet { req, fd } => {
                if let Some(u) = self.urings.get_mut(&req) {
                    u.fd = Some(fd);
                }
            }
            Kind::Complete { req, res } => {
                let Some(u) = self.urings.remove(&req) else {
                    return;
                };
                let name = match u.opcode.as_str() {
                    "READ" | "READV" | "READ_FIXED" | "READV_FIXED" => "pread_async",
                    "WRITE" | "WRITEV" | "WRITE_FIXED" | "WRITEV_FIXED" => "pwrite_async",
                    "FSYNC" => "fsync",
                    _ => return,
                };
                let path = u.fd.and_then(|fd| self.fd_path(u.tgid, fd as u64));
                let (Some(fd), Some(_)) = (u.fd, path) else {
                    self.out.uring_unplaced += 1;
                    return;
                };
                let fd_a = self.annotated(u.tgid, fd as u64);
                if u.off.is_none() && name != "fsync" {
                    self.out.missing_offsets += 1;
                }
                self.out.lines.push(Line {
                    pid: u.tid,
                    ts_ns: u.ts,
                    name: name.to_string(),
                    args: vec![
                        fd_a,
                        String::new(),
                        String::new(),
                        u.off.unwrap_or(0).to_string(),
                    ],
                    ret: res,
                    ret_path: None,
                    dur_ns: e.ts_ns.saturating_sub(u.ts),
                    ring: Some(u.ring),
                });
            }
        }
    }

    fn syscall(&mut self, tid: u32, tgid: u32, p: Pending, ret: i64, end: u64) {
        let a = |i: usize| p.args.get(i).copied().unwrap_or(0);
        let s = |i: usize| p.strings[i].as_str();
        let mut args: Vec<String> = Vec::new();
        let mut ret_path = None;
        let name: &str = match p.name.as_str() {
            "open" | "creat" | "openat" | "openat2" => {
                let (dfd, path, flags) = match p.name.as_str() {
                    "open" => (None, s(0), a(1)),
                    "creat" => (None, s(0), 0o1101),
                    "openat" => (Some(a(0)), s(0), a(2)),
                    _ => (Some(a(0)), s(0), 2),
                };
                let Some(abs) = self.resolve(tgid, dfd, path) else {
                    return;
                };
                if ret >= 0 {
                    self.table(tgid).insert(ret as i32, abs.clone());
                }
                ret_path = Some(abs.clone());
                args = vec!["AT_FDCWD</>".into(), quoted(&abs), open_flags(flags)];
                "openat"
            }
            "close" => {
                args = vec![self.annotated(tgid, a(0))];
                if ret >= 0 {
                    self.table(tgid).remove(&(a(0) as u32 as i32));
                }
                "close"
            }
            "read" | "write" | "readv" | "writev" | "fsync" | "fdatasync" | "newfstat"
            | "lseek" => {
                args = vec![self.annotated(tgid, a(0))];
                match p.name.as_str() {
                    "newfstat" => "fstat",
                    n => n,
                }
            }
            "pread64" | "pwrite64" | "preadv" | "pwritev" | "preadv2" | "pwritev2" => {
                args = vec![
                    self.annotated(tgid, a(0)),
                    String::new(),
                    a(2).to_string(),
                    a(3).to_string(),
                ];
                p.name.as_str()
            }
            "dup" | "dup2" | "dup3" | "fcntl" => {
                if p.name == "fcntl" && !matches!(a(1), F_DUPFD | F_DUPFD_CLOEXEC) {
                    return;
                }
                if ret >= 0 {
                    self.dup_fd(tgid, a(0), ret);
                }
                args = vec![self.annotated(tgid, a(0)), "F_DUPFD".into()];
                p.name.as_str()
            }
            "ftruncate" => {
                args = vec![self.annotated(tgid, a(0)), a(1).to_string()];
                "ftruncate"
            }
            "newstat" | "newlstat" | "newfstatat" | "statx" | "unlink" | "unlinkat" | "rmdir"
            | "mkdir" | "mkdirat" | "truncate" => {
                let dfd = matches!(
                    p.name.as_str(),
                    "newfstatat" | "statx" | "unlinkat" | "mkdirat"
                )
                .then(|| a(0));
                if dfd.is_some() && s(0).is_empty() {
                    // AT_EMPTY_PATH: the descriptor itself.
                    args = vec![self.annotated(tgid, a(0)), quoted("")];
                    "newfstatat"
                } else {
                    let Some(abs) = self.resolve(tgid, dfd, s(0)) else {
                        return;
                    };
                    match p.name.as_str() {
                        "unlink" | "unlinkat" => {
                            let dir = p.name == "unlinkat" && a(2) & 0x200 != 0;
                            args = vec![
                                "AT_FDCWD</>".into(),
                                quoted(&abs),
                                if dir { "AT_REMOVEDIR" } else { "0" }.into(),
                            ];
                            "unlinkat"
                        }
                        "rmdir" => {
                            args = vec![quoted(&abs)];
                            "rmdir"
                        }
                        "mkdir" | "mkdirat" => {
                            args = vec![quoted(&abs)];
                            "mkdir"
                        }
                        "truncate" => {
                            args = vec![quoted(&abs), a(1).to_string()];
                            "truncate"
                        }
                        _ => {
                            args = vec!["AT_FDCWD</>".into(), quoted(&abs)];
                            "newfstatat"
                        }
                    }
                }
            }
            "rename" | "renameat" | "renameat2" => {
                let (d1, d2) = if p.name == "rename" {
                    (None, None)
                } else {
                    (Some(a(0)), Some(a(2)))
                };
                let (Some(from), Some(to)) =
                    (self.resolve(tgid, d1, s(0)), self.resolve(tgid, d2, s(1)))
                else {
                    return;
                };
                args = vec![quoted(&from), quoted(&to)];
                "rename"
            }
            "copy_file_range" => {
                args = vec![
                    self.annotated(tgid, a(0)),
                    "NULL".into(),
                    self.annotated(tgid, a(2)),
                    "NULL".into(),
                ];
                "copy_file_range"
            }
            "sendfile64" => {
                args = vec![
                    self.annotated(tgid, a(0)),
                    self.annotated(tgid, a(1)),
                    "NULL".into(),
                ];
                "sendfile"
            }
            "clone" | "clone3" | "fork" | "vfork" => {
                if ret > 0 {
                    self.table(tgid);
                    self.parent_of.entry(ret as u32).or_insert(tgid);
                }
                "clone"
            }
            "chdir" | "fchdir" => {
                let dir = if p.name == "chdir" {
                    self.resolve(tgid, None, s(0))
                } else {
                    self.fd_path(tgid, a(0))
                };
                if ret == 0
                    && let Some(d) = dir
                {
                    self.table(tgid);
                    self.cwd.insert(tgid, d);
                }
                return;
            }
            "io_setup" => "io_setup",
            _ => return,
        };
        self.out.lines.push(Line {
            pid: tid,
            ts_ns: p.ts,
            name: name.to_string(),
            args,
            ret,
            ret_path,
            dur_ns: end.saturating_sub(p.ts),
            ring: None,
        });
    }

    pub fn finish(self) -> Converted {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
             fio-21945   (  21945) [000] .....   796.256508: sys_openat(dfd: ffffff9c, filename: 7ffe, flags: 42, mode: 1a4)
             fio-21945   (  21945) [000] .....   796.256510: sys_openat -> 0x7
             fio-21945   (  21945) [000] .....   796.256629: io_uring_submit_req: ring ffff888148ab3800, req ffff888298667800, user_data 0x556a4fad4640, opcode READ, flags 0x400000, sq_thread 0
             fio-21945   (  21945) [000] .....   796.256630: io_uring_file_get: ring ffff888148ab3800, req ffff888298667800, user_data 0x556a4fad4640, fd 7
             fio-21945   (  21945) [000] .....   796.256706: io_uring_complete: ring ffff888148ab3800, req ffff888298667800, user_data 0x556a4fad4640, result 4096, cflags 0x0 extra1 0 extra2 0 
       tar-x y-2   (  21945) [001] .....   796.256800: sys_pread64(fd: 7, buf: 5600, count: 1000, pos: 2000)
       tar-x y-2   (  21945) [001] .....   796.256810: sys_pread64 -> 0x1000
";

    #[test]
    fn text_lines_parse() {
        let ev: Vec<_> = TEXT.lines().filter_map(parse).collect();
        assert_eq!(ev.len(), 7);
        assert_eq!(ev[0].tid, 21945);
        assert_eq!(ev[0].ts_ns, 796_256_508_000);
        assert_eq!(
            ev[0].kind,
            Kind::Enter("openat".into(), vec![0xffffff9c, 0x7ffe, 0x42, 0x1a4])
        );
        assert_eq!(ev[1].kind, Kind::Exit("openat".into(), 7));
        assert!(matches!(&ev[2].kind, Kind::Submit { opcode, .. } if opcode == "READ"));
        assert!(matches!(ev[3].kind, Kind::FileGet { fd: 7, .. }));
        assert!(matches!(ev[4].kind, Kind::Complete { res: 4096, .. }));
        assert_eq!(ev[5].tid, 2, "comm with a space and a dash");
    }

    #[test]
    fn converts_to_annotated_lines() {
        let rec = |tag, ts, value, s: &str| Record {
            tgid: 21945,
            tid: 21945,
            ts_ns: ts,
            tag,
            value,
            strings: [s.into(), String::new()],
        };
        let openat = SYSCALLS.iter().position(|(n, _)| *n == "openat").unwrap() as u32;
        let mut c = Converter::new(
            "/r",
            vec![
                rec(openat, 796_256_508_300, 0x7ffe, "data/f"),
                rec(TAG_URING_SUBMIT, 796_256_629_100, 8192, ""),
            ],
        );
        for e in TEXT.lines().filter_map(parse) {
            c.feed(e);
        }
        let out = c.finish();
        assert_eq!(
            out.lines.len(),
            3,
            "open, io_uring read, the other thread's pread"
        );
        assert_eq!(out.lines[0].ret_path.as_deref(), Some("/r/data/f"));
        assert_eq!(out.lines[0].args[2], "O_RDWR|O_CREAT");
        let r = &out.lines[1];
        assert_eq!(r.name, "pread_async");
        assert_eq!(r.args[0], "7</r/data/f>");
        assert_eq!(r.args[3], "8192");
        assert_eq!((r.ret, r.dur_ns, r.ring), (4096, 77_000, Some(0)));
        let p = &out.lines[2];
        assert_eq!(p.pid, 2);
        assert_eq!(
            (p.args[0].as_str(), p.args[3].as_str()),
            ("7</r/data/f>", "8192")
        );
        let p = &out.lines[2];
        assert_eq!(
            (p.pid, p.args[0].as_str(), p.args[3].as_str()),
            (2, "7</r/data/f>", "8192")
        );
    }

    /// An io_uring read whose offset record the BPF ring lost was kept at offset 0 and
    /// said nothing: it is counted now, so that the recording says so.
    #[test]
    fn an_io_uring_read_without_its_offset_record_is_counted() {
        let openat = SYSCALLS.iter().position(|(n, _)| *n == "openat").unwrap() as u32;
        let mut c = Converter::new(
            "/r",
            vec![Record {
                tgid: 21945,
                tid: 21945,
                ts_ns: 796_256_508_300,
                tag: openat,
                value: 0x7ffe,
                strings: ["data/f".into(), String::new()],
            }],
        );
        for e in TEXT.lines().filter_map(parse) {
            c.feed(e);
        }
        let out = c.finish();
        assert_eq!(out.missing_offsets, 1);
        assert_eq!(out.missing_strings, 0);
        assert_eq!(out.lines[1].name, "pread_async");
        assert_eq!(out.lines[1].args[3], "0");
    }

    /// Feeds process 5's syscalls `(name, args, ret)` one after the other (an `openat`'s path
    /// is its BPF record's string) and gives the lines made.
    fn convert(calls: &[(&str, &[u64], i64)], paths: &[&str]) -> Vec<Line> {
        let openat = SYSCALLS.iter().position(|(n, _)| *n == "openat").unwrap() as u32;
        let ts = |i: usize| 10_000_000_000 + i as u64 * 1_000_000;
        let mut records = Vec::new();
        let mut next_path = paths.iter();
        for (i, (name, args, _)) in calls.iter().enumerate() {
            if *name == "openat" {
                records.push(Record {
                    tgid: 5,
                    tid: 5,
                    ts_ns: ts(i),
                    tag: openat,
                    value: args[1],
                    strings: [next_path.next().unwrap().to_string(), String::new()],
                });
            }
        }
        let mut c = Converter::new("/r", records);
        for (i, (name, args, ret)) in calls.iter().enumerate() {
            let ev = |kind| Event {
                tid: 5,
                tgid: 5,
                ts_ns: ts(i),
                kind,
            };
            c.feed(ev(Kind::Enter(name.to_string(), args.to_vec())));
            c.feed(ev(Kind::Exit(name.to_string(), *ret)));
        }
        c.finish().lines
    }

    /// The descriptor each `write` line names (`1</r/f>`, or `1` for an unknown file).
    fn writes(lines: &[Line]) -> Vec<&str> {
        lines
            .iter()
            .filter(|l| l.name == "write")
            .map(|l| l.args[0].as_str())
            .collect()
    }

    const CREATE: u64 = 0o1101; // O_WRONLY|O_CREAT|O_TRUNC
    const CWD: u64 = AT_FDCWD as u32 as u64;

    /// Regression: `sh -c 'echo hi > f; echo to-stdout'` saves stdout with
    /// `fcntl(1, F_DUPFD, 10)`, points 1 at `f`, and restores it with `dup2(10, 1)`; the
    /// restore kept 1's name `f`, so the second echo (to the terminal) was recorded as a
    /// 10-byte write to `f`.
    #[test]
    fn dup2_from_an_unknown_descriptor_forgets_the_old_name() {
        let lines = convert(
            &[
                ("openat", &[CWD, 0x1000, CREATE, 0o666], 3),
                ("fcntl", &[1, F_DUPFD, 10], 10),
                ("dup2", &[3, 1], 1),
                ("close", &[3], 0),
                ("write", &[1, 0, 3], 3),
                ("dup2", &[10, 1], 1),
                ("close", &[10], 0),
                ("write", &[1, 0, 10], 10),
            ],
            &["f"],
        );
        assert_eq!(writes(&lines), ["1</r/f>", "1"]);
    }

    /// dup3 too, and a dup2 onto a descriptor that names another file replaces the name.
    #[test]
    fn dup2_and_dup3_replace_the_target_s_name() {
        let lines = convert(
            &[
                ("openat", &[CWD, 0x1000, CREATE, 0o666], 3),
                ("openat", &[CWD, 0x2000, CREATE, 0o666], 4),
                ("dup2", &[4, 3], 3),
                ("write", &[3, 0, 1], 1),
                ("dup3", &[7, 3, 0x80000], 3), // 7 is not a file we know
                ("write", &[3, 0, 1], 1),
                ("dup2", &[4, 4], 4), // onto itself: nothing changes
                ("write", &[4, 0, 1], 1),
                ("dup2", &[9, 4], -9), // EBADF: 4 stays open
                ("write", &[4, 0, 1], 1),
            ],
            &["a", "b"],
        );
        assert_eq!(writes(&lines), ["3</r/b>", "3", "4</r/b>", "4</r/b>"]);
    }

    /// fcntl F_DUPFD and F_DUPFD_CLOEXEC copy the name; other fcntl commands change nothing.
    #[test]
    fn fcntl_dupfd_copies_the_name() {
        let lines = convert(
            &[
                ("openat", &[CWD, 0x1000, CREATE, 0o666], 3),
                ("fcntl", &[3, F_DUPFD, 10], 10),
                ("fcntl", &[3, F_DUPFD_CLOEXEC, 10], 11),
                ("fcntl", &[3, 2, 1], 0), // F_SETFD
                ("close", &[3], 0),
                ("write", &[10, 0, 1], 1),
                ("write", &[11, 0, 1], 1),
                ("fcntl", &[0, F_DUPFD_CLOEXEC, 10], 11), // after a close(11) not seen
                ("write", &[11, 0, 1], 1),
                ("dup", &[10], 12),
                ("write", &[12, 0, 1], 1),
            ],
            &["f"],
        );
        assert_eq!(writes(&lines), ["10</r/f>", "11</r/f>", "11", "12</r/f>"]);
    }

    /// Regression: a lost BPF record used to shift every later path by one call.
    #[test]
    fn a_lost_path_record_costs_only_its_own_call() {
        let openat = SYSCALLS.iter().position(|(n, _)| *n == "openat").unwrap() as u32;
        let text = "\
              sh-5   (      5) [000] .....   10.000100: sys_openat(dfd: ffffff9c, filename: 1000, flags: 241, mode: 1b6)
              sh-5   (      5) [000] .....   10.000110: sys_openat -> 0x3
              sh-5   (      5) [000] .....   10.000200: sys_openat(dfd: ffffff9c, filename: 2000, flags: 241, mode: 1b6)
              sh-5   (      5) [000] .....   10.000210: sys_openat -> 0x4
";
        let rec = Record {
            tgid: 5,
            tid: 5,
            ts_ns: 10_000_200_500,
            tag: openat,
            value: 0x2000,
            strings: ["second".into(), String::new()],
        };
        let mut c = Converter::new("/r", vec![rec]);
        for e in text.lines().filter_map(parse) {
            c.feed(e);
        }
        let out = c.finish();
        assert_eq!(out.missing_strings, 1);
        assert_eq!(out.lines.len(), 1);
        assert_eq!(out.lines[0].ret_path.as_deref(), Some("/r/second"));
    }
}
