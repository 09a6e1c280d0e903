//! Parsing `strace -f -ttt -T -y` output into trace calls. `-y` annotates every file
//! descriptor with its path, so each call names its file; offsets of plain read/write are
//! computed here by following each open file description (open, dup, fork, lseek, append).
//! Files the program found already there become fixtures (with the size it saw or read).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::rc::Rc;

use super::strace_line::{Line, fd_arg, normalize, parse_line, unquote};
use super::tracefile::{Call, CallOp, Fixture};

/// What the parser made of a whole strace log.
#[derive(Debug, Default)]
pub struct Parsed {
    pub calls: Vec<Call>,
    pub files: Vec<Fixture>,
    pub dirs: Vec<String>,
    pub skipped_outside_root: u64,
    pub skipped_failed: u64,
    pub threads: u32,
    pub recorded_ns: u64,
    /// io_uring instances the program set up (`io_uring_setup`): strace sees the setup,
    /// never the reads and writes submitted through them (the tracepoints follow them).
    pub uring_setups: u64,
    /// Linux AIO contexts the program set up (`io_setup`): neither recorder sees the I/O
    /// submitted through them (`io_submit`).
    pub aio_setups: u64,
}

#[derive(Debug)]
struct Desc {
    path: String,
    pos: u64,
    append: bool,
}

#[derive(Debug, Default)]
struct PathState {
    created: bool,
    modified: bool,
    seen_size: u64,
    is_dir: bool,
}

struct Parser<'a> {
    root: &'a Path,
    fds: HashMap<(u32, i64), Rc<RefCell<Desc>>>,
    last_by_path: HashMap<String, Rc<RefCell<Desc>>>,
    state: BTreeMap<String, PathState>,
    size: HashMap<String, u64>,
    mkdirs: BTreeSet<String>,
    out: Parsed,
    first_ts: Option<u64>,
    tids: BTreeSet<u32>,
}

impl Parser<'_> {
    /// Path relative to the root, or None when outside it (or the root itself).
    fn rel(&self, abs: &str) -> Option<String> {
        let p = normalize(Path::new(abs));
        let r = p.strip_prefix(self.root).ok()?;
        let s = r.to_string_lossy().into_owned();
        (!s.is_empty()).then_some(s)
    }

    fn at_path(&self, dirfd: &str, path: &str) -> Option<String> {
        let p = unquote(path)?;
        if p.starts_with('/') {
            return Some(p);
        }
        let dir = fd_arg(dirfd).1?;
        Some(format!("{dir}/{p}"))
    }

    fn first_touch(&mut self, rel: &str, creates: bool) -> &mut PathState {
        self.state
            .entry(rel.to_string())
            .or_insert_with(|| PathState {
                created: creates,
                ..Default::default()
            })
    }

    fn desc(&self, pid: u32, fd: i64, rel: &str) -> Option<Rc<RefCell<Desc>>> {
        self.fds
            .get(&(pid, fd))
            .filter(|d| d.borrow().path == rel)
            .or_else(|| self.last_by_path.get(rel))
            .cloned()
    }

    fn push(&mut self, l: &Line, op: CallOp, path: String) -> &mut Call {
        let first = *self.first_ts.get_or_insert(l.ts_ns);
        self.tids.insert(l.pid);
        let t_ns = l.ts_ns.saturating_sub(first);
        self.out.recorded_ns = self.out.recorded_ns.max(t_ns + l.dur_ns);
        self.out.calls.push(Call {
            t_ns,
            tid: l.pid,
            op,
            path,
            to: None,
            off: None,
            len: None,
            flags: None,
            dur_ns: l.dur_ns,
            ring: l.ring,
        });
        self.out.calls.last_mut().expect("just pushed")
    }

    /// A read or write of `l.ret` bytes on `fd` (path `rel`): at `explicit` (pread/pwrite),
    /// else at the description's position (or the end, for O_APPEND writes).
    fn transfer(&mut self, l: &Line, fd: i64, rel: String, explicit: Option<u64>, write: bool) {
        let n = l.ret as u64;
        let d = self.desc(l.pid, fd, &rel);
        let size = self.size.get(&rel).copied().unwrap_or(0);
        let off = match (&explicit, &d) {
            (Some(o), _) => *o,
            (None, Some(d)) if write && d.borrow().append => size,
            (None, Some(d)) => d.borrow().pos,
            (None, None) if write => size,
            (None, None) => 0,
        };
        if explicit.is_none()
            && let Some(d) = &d
        {
            d.borrow_mut().pos = off + n;
        }
        let st = self.first_touch(&rel, false);
        if write {
            st.modified = true;
            self.size.insert(rel.clone(), size.max(off + n));
        } else if !st.modified && !st.created {
            st.seen_size = st.seen_size.max(off + n);
        }
        let c = self.push(l, if write { CallOp::Write } else { CallOp::Read }, rel);
        c.off = Some(off);
        c.len = Some(n);
    }

    fn line(&mut self, l: Line) {
        let a = |i: usize| l.args.get(i).map(String::as_str).unwrap_or("");
        let name = l.name.as_str();
        if matches!(name, "clone" | "clone3" | "fork" | "vfork") {
            if l.ret > 0 {
                let inherited: Vec<_> = self
                    .fds
                    .iter()
                    .filter(|((p, _), _)| *p == l.pid)
                    .map(|((_, fd), d)| (*fd, d.clone()))
                    .collect();
                for (fd, d) in inherited {
                    self.fds.insert((l.ret as u32, fd), d);
                }
            }
            return;
        }
        if l.ret < 0 {
            self.out.skipped_failed += 1;
            return;
        }
        match name {
            "io_uring_setup" => return self.out.uring_setups += 1,
            "io_setup" => return self.out.aio_setups += 1,
            _ => {}
        }
        // In-kernel copies (cp uses copy_file_range): a read of one file and a write of another.
        let copy_sides = match name {
            "copy_file_range" => Some(((a(0), a(1)), (a(2), a(3)))),
            "sendfile" | "sendfile64" => Some(((a(1), a(2)), (a(0), "NULL"))),
            _ => None,
        };
        if let Some(((fd_in, off_in), (fd_out, off_out))) = copy_sides {
            for (fd, off, write) in [(fd_in, off_in, false), (fd_out, off_out, true)] {
                let (num, path) = fd_arg(fd);
                match path.and_then(|p| self.rel(&p)) {
                    Some(rel) => {
                        // `[4096]` or `[0 => 4096]`: the offset before the call.
                        let explicit = off
                            .strip_prefix('[')
                            .and_then(|x| x.split(|c: char| !c.is_ascii_digit()).next())
                            .and_then(|x| x.parse().ok());
                        self.transfer(&l, num, rel, explicit, write);
                    }
                    None => self.out.skipped_outside_root += 1,
                }
            }
            return;
        }
        // The file this call is about (absolute), from -y annotations or path arguments.
        let abs: Option<String> = match name {
            "open" | "creat" | "openat" | "openat2" => l.ret_path.clone(),
            "stat" | "lstat" | "unlink" | "rmdir" | "mkdir" | "truncate" | "rename" => {
                let cwd_rel = unquote(a(0));
                cwd_rel.and_then(|p| {
                    if p.starts_with('/') {
                        Some(p)
                    } else {
                        std::env::current_dir()
                            .ok()
                            .map(|c| format!("{}/{p}", c.display()))
                    }
                })
            }
            "newfstatat" | "statx" | "unlinkat" | "mkdirat" | "renameat" | "renameat2"
            | "fstatat64" => {
                if unquote(a(1)).as_deref() == Some("") {
                    fd_arg(a(0)).1
                } else {
                    self.at_path(a(0), a(1))
                }
            }
            _ => fd_arg(a(0)).1,
        };
        let Some(abs) = abs else { return };
        let Some(rel) = self.rel(&abs) else {
            self.out.skipped_outside_root += 1;
            return;
        };
        match name {
            "open" | "creat" | "openat" | "openat2" => {
                let flags = match name {
                    "creat" => "O_WRONLY|O_CREAT|O_TRUNC".to_string(),
                    "open" => a(1).to_string(),
                    "openat2" => a(2).to_string(),
                    _ => a(2).to_string(),
                };
                if flags.contains("O_DIRECTORY") {
                    self.first_touch(&rel, false).is_dir = true;
                    return;
                }
                let has = |f: &str| flags.split(['|', ' ', ',', '{', '}', '=']).any(|x| x == f);
                let creates = has("O_CREAT") && (has("O_TRUNC") || has("O_EXCL"));
                let mut fl = Vec::new();
                if has("O_WRONLY") || has("O_RDWR") {
                    fl.push("write");
                }
                for (f, n) in [
                    ("O_CREAT", "create"),
                    ("O_TRUNC", "trunc"),
                    ("O_APPEND", "append"),
                    ("O_EXCL", "excl"),
                ] {
                    if has(f) {
                        fl.push(n);
                    }
                }
                let st = self.first_touch(&rel, creates);
                if has("O_TRUNC") {
                    st.modified = true;
                    self.size.insert(rel.clone(), 0);
                }
                let d = Rc::new(RefCell::new(Desc {
                    path: rel.clone(),
                    pos: 0,
                    append: has("O_APPEND"),
                }));
                self.fds.insert((l.pid, l.ret), d.clone());
                self.last_by_path.insert(rel.clone(), d);
                let c = self.push(&l, CallOp::Open, rel);
                c.flags = Some(fl.join(","));
            }
            "close" => {
                self.fds.remove(&(l.pid, fd_arg(a(0)).0));
                self.push(&l, CallOp::Close, rel);
            }
            "dup" | "dup2" | "dup3" | "fcntl" | "fcntl64" => {
                if name.starts_with("fcntl") && !a(1).starts_with("F_DUPFD") {
                    return;
                }
                if let Some(d) = self.desc(l.pid, fd_arg(a(0)).0, &rel) {
                    self.fds.insert((l.pid, l.ret), d);
                }
            }
            "lseek" | "_llseek" => {
                if let Some(d) = self.desc(l.pid, fd_arg(a(0)).0, &rel) {
                    d.borrow_mut().pos = l.ret as u64;
                }
            }
            "read" | "readv" | "pread64" | "preadv" | "preadv2" | "write" | "writev"
            | "pwrite64" | "pwritev" | "pwritev2" | "pread_async" | "pwrite_async" => {
                let explicit: Option<u64> =
                    name.starts_with('p').then(|| a(3).parse().ok()).flatten();
                let write = name.contains("write");
                self.transfer(&l, fd_arg(a(0)).0, rel, explicit, write);
            }
            "fsync" | "fdatasync" => {
                self.push(
                    &l,
                    if name == "fsync" {
                        CallOp::Fsync
                    } else {
                        CallOp::Fdatasync
                    },
                    rel,
                );
            }
            "stat" | "lstat" | "fstat" | "newfstatat" | "statx" | "fstatat64" => {
                let text = l.args.join(",");
                let is_dir = text.contains("S_IFDIR");
                let size = ["st_size=", "stx_size="].iter().find_map(|k| {
                    let i = text.find(k)? + k.len();
                    text[i..]
                        .split(|c: char| !c.is_ascii_digit())
                        .next()?
                        .parse::<u64>()
                        .ok()
                });
                let known = self.size.contains_key(&rel);
                let st = self.first_touch(&rel, false);
                st.is_dir |= is_dir;
                if !st.modified
                    && !st.created
                    && let Some(s) = size
                    && !is_dir
                {
                    st.seen_size = st.seen_size.max(s);
                    if !known {
                        self.size.insert(rel.clone(), s);
                    }
                }
                if !is_dir {
                    self.push(&l, CallOp::Stat, rel);
                }
            }
            "unlink" | "unlinkat" | "rmdir" => {
                let dir = name == "rmdir" || a(2).contains("AT_REMOVEDIR");
                self.first_touch(&rel, false).modified = true;
                self.size.remove(&rel);
                self.push(&l, if dir { CallOp::Rmdir } else { CallOp::Unlink }, rel);
            }
            "mkdir" | "mkdirat" => {
                self.first_touch(&rel, true).is_dir = true;
                self.mkdirs.insert(rel.clone());
                self.push(&l, CallOp::Mkdir, rel);
            }
            "rename" | "renameat" | "renameat2" => {
                let to_abs = if name == "rename" {
                    unquote(a(1)).map(|p| {
                        if p.starts_with('/') {
                            p
                        } else {
                            format!(
                                "{}/{p}",
                                std::env::current_dir().unwrap_or_default().display()
                            )
                        }
                    })
                } else {
                    self.at_path(a(2), a(3))
                };
                let Some(to) = to_abs.and_then(|t| self.rel(&t)) else {
                    self.out.skipped_outside_root += 1;
                    return;
                };
                self.first_touch(&rel, false).modified = true;
                self.first_touch(&to, true).modified = true;
                if let Some(s) = self.size.remove(&rel) {
                    self.size.insert(to.clone(), s);
                }
                let c = self.push(&l, CallOp::Rename, rel);
                c.to = Some(to);
            }
            "truncate" | "ftruncate" | "ftruncate64" => {
                let len: u64 = a(1).parse().unwrap_or(0);
                self.first_touch(&rel, false).modified = true;
                self.size.insert(rel.clone(), len);
                let c = self.push(&l, CallOp::Truncate, rel);
                c.len = Some(len);
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Parsed {
        let mut dirs = BTreeSet::new();
        for (p, st) in &self.state {
            if !st.created && st.is_dir && !self.mkdirs.contains(p) {
                dirs.insert(p.clone());
            }
            if !st.created && !st.is_dir {
                self.out.files.push(Fixture {
                    path: p.clone(),
                    size: st.seen_size,
                });
            }
        }
        let mut every: Vec<&str> = self.state.keys().map(String::as_str).collect();
        every.extend(self.out.calls.iter().filter_map(|c| c.to.as_deref()));
        for p in every {
            let mut anc = Path::new(p).parent();
            while let Some(d) = anc.filter(|d| !d.as_os_str().is_empty()) {
                let s = d.to_string_lossy().into_owned();
                if !self.mkdirs.contains(&s) {
                    dirs.insert(s);
                }
                anc = d.parent();
            }
        }
        // A directory the program created itself is not needed beforehand, nor anything in
        // it (`cat x >> newdir/f` opens without O_TRUNC, yet newdir/f cannot have existed).
        let made = |p: &str| {
            self.mkdirs
                .iter()
                .any(|m| p == m || p.starts_with(&format!("{m}/")))
        };
        // A path with recorded paths below it is a directory, even when the recorder did not
        // see it as one (the tracepoints recorder sees no stat results).
        let ancestors = dirs.clone();
        dirs.retain(|d| !made(d));
        self.out
            .files
            .retain(|f| !made(&f.path) && !ancestors.contains(&f.path));
        self.out.dirs = dirs.into_iter().collect();
        self.out.threads = self.tids.len() as u32;
        self.out
    }
}

/// Parse a whole strace log; `root` must be absolute and canonical.
pub fn parse(text: &str, root: &Path) -> Parsed {
    let mut pending = HashMap::new();
    parse_lines(
        text.lines().filter_map(|raw| parse_line(raw, &mut pending)),
        root,
    )
}

/// Calls from lines in strace's shape (the tracepoints recorder builds them from kernel
/// events, with the same `fd</path>` annotations), so both recorders share one model of
/// descriptors, offsets and fixtures. `pread_async`/`pwrite_async` are io_uring reads and
/// writes (`ring` set, explicit offset in `args[3]`).
pub(super) fn parse_lines(lines: impl Iterator<Item = Line>, root: &Path) -> Parsed {
    let root = normalize(root);
    let mut p = Parser {
        root: &root,
        fds: HashMap::new(),
        last_by_path: HashMap::new(),
        state: BTreeMap::new(),
        size: HashMap::new(),
        mkdirs: BTreeSet::new(),
        out: Parsed::default(),
        first_ts: None,
        tids: BTreeSet::new(),
    };
    for l in lines {
        p.line(l);
    }
    p.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's io_uring reads under strace: the setup is seen, the I/O never. The trace said
    /// "reads 0 calls" for a random-read job and nothing else; the count lets `record`
    /// warn.
    #[test]
    fn io_uring_and_aio_setups_are_counted() {
        let log = r#"10 1.000000 io_uring_setup(16, {flags=0, sq_thread_cpu=0, sq_thread_idle=0, sq_entries=16, cq_entries=32, features=IORING_FEAT_SINGLE_MMAP, sq_off={head=0}, cq_off={head=64}}) = 5<anon_inode:[io_uring]> <0.000020>
10 1.000100 io_uring_enter(5<anon_inode:[io_uring]>, 16, 0, 0, NULL, 8) = 16 <0.000010>
11 1.000200 io_setup(128, [0x7f00]) = 0 <0.000005>
11 1.000300 io_uring_setup(8, 0x7ffd) = -1 EPERM (Operation not permitted) <0.000002>
"#;
        let p = parse(log, Path::new("/r"));
        assert_eq!(
            p.uring_setups, 1,
            "one ring; the failed setup is not counted"
        );
        assert_eq!(p.aio_setups, 1);
        assert!(p.calls.is_empty());
        let plain = parse(
            "10 1.0 openat(AT_FDCWD</r>, \"a\", O_RDONLY) = 3</r/a> <0.000010>\n",
            Path::new("/r"),
        );
        assert_eq!((plain.uring_setups, plain.aio_setups), (0, 0));
    }

    #[test]
    fn parses_shell_redirections_and_offsets() {
        let log = r#"10 1.000000 openat(AT_FDCWD</r>, "a", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</r/a> <0.000010>
10 1.000100 dup2(3</r/a>, 1) = 1</r/a> <0.000001>
10 1.000200 write(1</r/a>, ""..., 3) = 3 <0.000005>
10 1.000300 write(1</r/a>, ""..., 2) = 2 <0.000005>
10 1.000400 openat(AT_FDCWD</r>, "in", O_RDONLY) = 4</r/in> <0.000010>
10 1.000500 read(4</r/in>, ""..., 4096 <unfinished ...>
11 1.000550 openat(AT_FDCWD</r>, "/etc/x", O_RDONLY) = 3</etc/x> <0.000010>
10 1.000600 <... read resumed>) = 100 <0.000100>
10 1.000700 newfstatat(AT_FDCWD</r>, "gone", 0x7ff, 0) = -1 ENOENT (No such file or directory) <0.000003>
10 1.000800 renameat2(AT_FDCWD</r>, "a", AT_FDCWD</r>, "d/b", RENAME_NOREPLACE) = 0 <0.000010>
10 1.000900 +++ exited with 0 +++"#;
        let p = parse(log, Path::new("/r"));
        let ops: Vec<_> = p
            .calls
            .iter()
            .map(|c| (c.op, c.path.as_str(), c.off, c.len))
            .collect();
        assert_eq!(
            ops,
            vec![
                (CallOp::Open, "a", None, None),
                (CallOp::Write, "a", Some(0), Some(3)),
                (CallOp::Write, "a", Some(3), Some(2)),
                (CallOp::Open, "in", None, None),
                (CallOp::Read, "in", Some(0), Some(100)),
                (CallOp::Rename, "a", None, None),
            ]
        );
        assert_eq!(p.calls[4].t_ns, 500_000);
        assert_eq!(p.skipped_outside_root, 1);
        assert_eq!(p.skipped_failed, 1);
        assert_eq!(
            p.files,
            vec![Fixture {
                path: "in".into(),
                size: 100
            }]
        );
        assert_eq!(p.dirs, vec!["d".to_string()]);
    }

    #[test]
    fn copy_file_range_is_a_read_and_a_write() {
        let log = r#"7 2.000000 openat(AT_FDCWD</r>, "src", O_RDONLY) = 3</r/src> <0.000010>
7 2.000100 openat(AT_FDCWD</r>, "dst", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4</r/dst> <0.000010>
7 2.000200 copy_file_range(3</r/src>, NULL, 4</r/dst>, NULL, 9223372035781033984, 0) = 300 <0.000100>
7 2.000300 copy_file_range(3</r/src>, [300], 4</r/dst>, NULL, 100, 0) = 50 <0.000100>"#;
        let p = parse(log, Path::new("/r"));
        let rw: Vec<_> = p
            .calls
            .iter()
            .filter(|c| c.len.is_some())
            .map(|c| (c.op, c.path.as_str(), c.off, c.len))
            .collect();
        assert_eq!(
            rw,
            vec![
                (CallOp::Read, "src", Some(0), Some(300)),
                (CallOp::Write, "dst", Some(0), Some(300)),
                (CallOp::Read, "src", Some(300), Some(50)),
                (CallOp::Write, "dst", Some(300), Some(50)),
            ]
        );
        assert_eq!(
            p.files,
            vec![Fixture {
                path: "src".into(),
                size: 350
            }]
        );
    }
}
