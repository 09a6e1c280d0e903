//! The queries: open, record (one immediate transaction per result), list, get.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};

use super::extract::{device_identity, figures_of, headline, normalize_time, options_of, run_key};
use super::schema::{self, db_error};
use super::{Entry, Figure, Filter, HealthPoint, History, Recorded};
use crate::error::UsageError;
use crate::model::ResultDoc;
use crate::model::device::SmartInfo;

const ENTRY_COLUMNS: &str =
    "id, started_at, command, status, host, device, filesystem, headline, source, options";

fn entry_of(r: &Row<'_>) -> rusqlite::Result<Entry> {
    Ok(Entry {
        id: r.get(0)?,
        started_at: r.get(1)?,
        command: r.get(2)?,
        status: r.get(3)?,
        host: r.get(4)?,
        device: r.get(5)?,
        filesystem: r.get(6)?,
        headline: r.get(7)?,
        source: r.get(8)?,
        options: r.get(9)?,
    })
}

/// `%`, `_` and `\` taken literally in a LIKE pattern (ESCAPE '\').
fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A filter as SQL (`WHERE …` or nothing) and its parameters.
fn where_clause(f: &Filter) -> Result<(String, Vec<String>), UsageError> {
    let mut conds = Vec::new();
    let mut args = Vec::new();
    if let Some(d) = f.device.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        args.push(format!("%{}%", like_escape(d)));
        let i = args.len();
        args.push(d.to_string());
        let j = args.len();
        conds.push(format!(
            "(device LIKE ?{i} ESCAPE '\\' OR block_device = ?{j} OR device_serial = ?{j} OR device_wwn = ?{j} OR device_link = ?{j} OR loop_backing_file = ?{j})"
        ));
    }
    if let Some(c) = f.command.as_deref().filter(|c| !c.is_empty()) {
        args.push(c.to_string());
        conds.push(format!("command = ?{}", args.len()));
    }
    if let Some(s) = f.since.as_deref().filter(|s| !s.is_empty()) {
        args.push(super::parse_since(s, chrono::Utc::now())?);
        conds.push(format!("started_at >= ?{}", args.len()));
    }
    let sql = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    Ok((sql, args))
}

/// What `figures_of` and `headline` extract from a document. Bump it when they change what
/// they take from a document (a new metric, another headline figure): the next open indexes
/// every stored result again from its document, so a trend never mixes the old extraction
/// with the new. 2: a sustain pass's settled speed (results recorded before were headlined
/// by their average, cache and slow phase mixed). 3: a slack analysis's headline names the
/// tree (or size list) it scanned. 4: the device identity (a loop by its backing file, a
/// disk without a model by its vendor, size and host) and the options (`--preset`, `--size`,
/// `--scale`) are taken again too. 5: each figure as its command's table gives it (`value`,
/// `value_of`: the median, a files test's mean, a peak test's best run); the headline uses
/// it (it gave the median of a files test and of a peak test's rates). 6: every test of a
/// matrix (`report::metrics::test_name`): a run on the aged file system as `NAME (aged)`,
/// two workloads' tests of one name with the workload's label before it (the second of
/// such tests was not indexed, nor any aged run whose fresh run was). 7: the options are
/// every flag that changes the measurement (`extract::options_of`; only `--preset`,
/// `--size` and `--scale` were kept, so runs with another `--rw` or `--sizes` read alike).
/// 8: the headline labels a figure in its command's words (`report::metrics::label_for`: a
/// sustain pass's `average MB/s`; it said `MB/s`).
pub const EXTRACT_VERSION: u32 = 8;

impl History {
    /// Open (create, migrate) the history at `path`, and index the stored results again
    /// if an older extractor indexed them. A file that is not an iolab history, is damaged
    /// or was written by a newer iolab is refused (`UsageError`) and not touched.
    pub fn open(path: &Path) -> anyhow::Result<History> {
        let conn = schema::open(path)?;
        let h = History {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        };
        h.reindex_if_stale()?;
        Ok(h)
    }

    /// Index every stored document again (headline and figures) when the database says an
    /// older `EXTRACT_VERSION` indexed it; the number of results indexed again. One
    /// transaction: a second iolab opening at the same time waits and finds it done. A
    /// document this iolab cannot read keeps its row as it was.
    fn reindex_if_stale(&self) -> anyhow::Result<usize> {
        let version = |c: &Connection| -> rusqlite::Result<u32> {
            Ok(c.query_row(
                "SELECT value FROM meta WHERE key = 'extract_version'",
                [],
                |r| r.get::<_, String>(0),
            )
            .optional()?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
        };
        let mut conn = self.conn();
        if version(&conn).map_err(|e| self.err(e))? >= EXTRACT_VERSION {
            return Ok(0);
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        if version(&tx).map_err(|e| self.err(e))? >= EXTRACT_VERSION {
            return Ok(0);
        }
        let stored: Vec<(i64, String)> = {
            let mut st = tx
                .prepare("SELECT id, doc FROM results")
                .map_err(|e| self.err(e))?;
            let rows = st
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(|e| self.err(e))?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(|e| self.err(e))?
        };
        let mut done = 0;
        for (id, json) in stored {
            let Ok(doc) = serde_json::from_str::<ResultDoc>(&json) else {
                continue;
            };
            let figures = figures_of(&doc);
            let env = &doc.environment;
            tx.execute(
                "UPDATE results SET headline = ?1, device = ?2, options = ?3, device_link = ?4,
                    loop_backing_file = ?5 WHERE id = ?6",
                params![
                    headline(&doc, &figures),
                    device_identity(env),
                    options_of(&doc.argv),
                    env.device_link,
                    loop_file(env),
                    id
                ],
            )
            .map_err(|e| self.err(e))?;
            tx.execute("DELETE FROM figures WHERE result_id = ?1", [id])
                .map_err(|e| self.err(e))?;
            insert_figures(&tx, id, &figures).map_err(|e| self.err(e))?;
            done += 1;
        }
        adopt_serial_only_rows(&tx).map_err(|e| self.err(e))?;
        tx.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('extract_version', ?1)",
            [EXTRACT_VERSION.to_string()],
        )
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(done)
    }

    /// `open` for a command that only reads: a database that does not exist is read as
    /// an empty history, and neither it nor its directory is created
    /// (`history --history /new/dir/h.sqlite list` made both).
    pub fn open_to_read(path: &Path) -> anyhow::Result<History> {
        if path.exists() {
            return History::open(path);
        }
        Ok(History {
            conn: Mutex::new(schema::open_empty()?),
            path: path.to_path_buf(),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An empty history in memory, named `name` in messages: the console without a
    /// history keeps its own runs there, so its filters read them as the history does.
    pub fn in_memory(name: &str) -> anyhow::Result<History> {
        Ok(History {
            conn: Mutex::new(schema::open_empty()?),
            path: Path::new(name).to_path_buf(),
        })
    }

    fn err(&self, e: rusqlite::Error) -> anyhow::Error {
        db_error(&self.path, e)
    }

    /// Every row `sql` gives with `params`, each read by `read`; an SQLite error names the
    /// history.
    fn rows<T>(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
        read: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> anyhow::Result<Vec<T>> {
        let conn = self.conn();
        let mut st = conn.prepare(sql).map_err(|e| self.err(e))?;
        let rows = st.query_map(params, read).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Record a final result document; `source` is the result file it came from or was
    /// written to. The row id (the existing one when this run is already recorded).
    pub fn record(&self, doc: &ResultDoc, source: Option<&Path>) -> anyhow::Result<i64> {
        Ok(self.record_with(doc, source, None)?.id())
    }

    /// `record` with the device's SMART snapshot, saying whether the row is new.
    pub fn record_with(
        &self,
        doc: &ResultDoc,
        source: Option<&Path>,
        health: Option<&SmartInfo>,
    ) -> anyhow::Result<Recorded> {
        let key = run_key(doc);
        let figures = figures_of(doc);
        let line = headline(doc, &figures);
        let json = serde_json::to_string(doc)?;
        let health = health.map(serde_json::to_string).transpose()?;
        let source = source.map(|p| {
            std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        });
        let env = &doc.environment;
        let mut conn = self.conn();
        // IMMEDIATE: take the write lock at the start, so two writers queue on the busy
        // timeout instead of one failing when it upgrades a read lock.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let existing: Option<(i64, Option<String>, String)> = tx
            .query_row(
                "SELECT id, source, status FROM results WHERE run_key = ?1",
                [&key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if let Some((id, old_source, old_status)) = existing {
            if old_source.is_none() && source.is_some() {
                tx.execute(
                    "UPDATE results SET source = ?1 WHERE id = ?2",
                    params![source, id],
                )
                .map_err(|e| self.err(e))?;
            }
            // A file imported while its run was still going (`running`, part of its tests):
            // the finished document replaces it, or the history would keep the half.
            let finishes = old_status == "running" && doc.status != "running";
            if finishes {
                tx.execute(
                    "UPDATE results SET finished_at = ?1, status = ?2, headline = ?3,
                        health = coalesce(?4, health), doc = ?5, recorded_at = ?6
                     WHERE id = ?7",
                    params![
                        doc.finished_at.as_deref().map(normalize_time),
                        doc.status,
                        line,
                        health,
                        json,
                        crate::model::now_rfc3339(),
                        id
                    ],
                )
                .map_err(|e| self.err(e))?;
                tx.execute("DELETE FROM figures WHERE result_id = ?1", [id])
                    .map_err(|e| self.err(e))?;
                insert_figures(&tx, id, &figures).map_err(|e| self.err(e))?;
            }
            tx.commit().map_err(|e| self.err(e))?;
            return Ok(if finishes {
                Recorded::Updated(id)
            } else {
                Recorded::Existing(id)
            });
        }
        let filesystem = filesystem_of(doc);
        tx.execute(
            "INSERT INTO results (run_key, started_at, finished_at, command, status, host,
                device, device_model, device_serial, device_wwn, block_device, target_path,
                filesystem, tool_version, doc_schema_version, headline, health, source,
                recorded_at, doc, options, device_link, loop_backing_file)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
            params![
                key,
                normalize_time(&doc.started_at),
                doc.finished_at.as_deref().map(normalize_time),
                doc.command,
                doc.status,
                env.hostname,
                device_identity(env),
                env.device_model,
                env.device_serial,
                env.device_wwn,
                env.parent_device.as_ref().or(env.block_device.as_ref()),
                env.target_path,
                filesystem,
                doc.tool.version,
                doc.schema_version,
                line,
                health,
                source,
                crate::model::now_rfc3339(),
                json,
                options_of(&doc.argv),
                env.device_link,
                loop_file(env),
            ],
        )
        .map_err(|e| self.err(e))?;
        let id = tx.last_insert_rowid();
        insert_figures(&tx, id, &figures).map_err(|e| self.err(e))?;
        adopt_serial_only_rows(&tx).map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Recorded::New(id))
    }

    /// The recorded results that pass `filter`, newest first.
    pub fn list(&self, filter: &Filter) -> anyhow::Result<Vec<Entry>> {
        let (cond, args) = where_clause(filter)?;
        let limit = filter
            .limit
            .map(|l| format!(" LIMIT {l}"))
            .unwrap_or_default();
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM results {cond} ORDER BY started_at DESC, id DESC{limit}"
        );
        self.rows(&sql, rusqlite::params_from_iter(args.iter()), entry_of)
    }

    /// How many results pass `filter` (its limit ignored).
    pub fn count(&self, filter: &Filter) -> anyhow::Result<usize> {
        let (cond, args) = where_clause(filter)?;
        let conn = self.conn();
        conn.query_row(
            &format!("SELECT count(*) FROM results {cond}"),
            rusqlite::params_from_iter(args.iter()),
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n as usize)
        .map_err(|e| self.err(e))
    }

    /// One recorded result's whole document.
    pub fn get(&self, id: i64) -> anyhow::Result<Option<ResultDoc>> {
        let json: Option<String> = self
            .conn()
            .query_row("SELECT doc FROM results WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))?;
        json.map(|j| {
            serde_json::from_str(&j).map_err(|e| {
                anyhow::anyhow!(
                    "{}: result #{id} cannot be read back ({e})",
                    self.path.display()
                )
            })
        })
        .transpose()
    }

    /// One recorded result's row, as listed.
    pub fn entry(&self, id: i64) -> anyhow::Result<Option<Entry>> {
        self.conn()
            .query_row(
                &format!("SELECT {ENTRY_COLUMNS} FROM results WHERE id = ?1"),
                [id],
                entry_of,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Remove these results, their figures (`ON DELETE CASCADE`) and health snapshots with
    /// them, all or none: a number the history does not hold is a usage error and nothing
    /// is removed. The entries removed, in the order given (a number given twice, once).
    /// The result files stay where they are; `import` adds one back.
    pub fn forget(&self, ids: &[i64]) -> anyhow::Result<Vec<Entry>> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let mut gone: Vec<Entry> = Vec::new();
        for &id in ids {
            if gone.iter().any(|e| e.id == id) {
                continue;
            }
            let e = tx
                .query_row(
                    &format!("SELECT {ENTRY_COLUMNS} FROM results WHERE id = ?1"),
                    [id],
                    entry_of,
                )
                .optional()
                .map_err(|e| self.err(e))?;
            match e {
                Some(e) => gone.push(e),
                None => {
                    return Err(crate::usage!(
                        "#{id}: no such result in {} (`iolab history` lists them); nothing removed",
                        self.path.display()
                    ));
                }
            }
        }
        for e in &gone {
            tx.execute("DELETE FROM results WHERE id = ?1", [e.id])
                .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(gone)
    }

    /// The SMART snapshot recorded with a result, if one was taken.
    pub fn health(&self, id: i64) -> anyhow::Result<Option<SmartInfo>> {
        let json: Option<Option<String>> = self
            .conn()
            .query_row("SELECT health FROM results WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(json.flatten().and_then(|j| serde_json::from_str(&j).ok()))
    }

    /// The SMART snapshots kept with the results on `device` (the identity exactly as
    /// stored, see `resolve_device`), oldest first.
    pub fn health_history(&self, device: &str) -> anyhow::Result<Vec<HealthPoint>> {
        let rows = self.rows(
            "SELECT id, started_at, health FROM results
             WHERE device = ?1 AND health IS NOT NULL ORDER BY started_at, id",
            [device],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for (id, started_at, json) in rows {
            if let Ok(smart) = serde_json::from_str(&json) {
                out.push(HealthPoint {
                    id,
                    started_at,
                    smart,
                });
            }
        }
        Ok(out)
    }

    /// The figures of one result, in test order.
    pub fn figures(&self, id: i64) -> anyhow::Result<Vec<Figure>> {
        self.rows(
            "SELECT test, metric, is_primary, n, mean, median, stddev, ci95_low, ci95_high,
                value, value_of
             FROM figures WHERE result_id = ?1 ORDER BY rowid",
            [id],
            figure_of,
        )
    }

    /// Every figure of the results that pass `filter` (newest result first), for exports.
    pub fn figures_matching(&self, filter: &Filter) -> anyhow::Result<Vec<(Entry, Figure)>> {
        let entries = self.list(filter)?;
        let mut out = Vec::new();
        for e in entries {
            for f in self.figures(e.id)? {
                out.push((e.clone(), f));
            }
        }
        Ok(out)
    }

    /// Every device with its number of results, most results first.
    pub fn devices(&self) -> anyhow::Result<Vec<(String, usize)>> {
        self.rows(
            "SELECT device, count(*) AS n FROM results GROUP BY device ORDER BY n DESC, device",
            [],
            |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)),
        )
    }

    /// The commands of the results held, in name order.
    pub fn commands(&self) -> anyhow::Result<Vec<String>> {
        self.rows(
            "SELECT DISTINCT command FROM results ORDER BY command",
            [],
            |r| r.get(0),
        )
    }

    /// The tests measured on `device` (exactly as stored) with their number of results,
    /// most results first; tests run as often in the order the newest result holding them
    /// lists them (its table's order: `SEQ1M Q8T1 read` before `RND4K Q1T1 read`, not the
    /// alphabet's), so the first is the test a user means by the device's figure.
    pub fn tests(&self, device: &str) -> anyhow::Result<Vec<(String, usize)>> {
        // Newest result first, each result's figures in its test order.
        let rows = self.rows(
            "SELECT f.test, f.result_id FROM figures f
             JOIN results r ON r.id = f.result_id
             WHERE r.device = ?1 ORDER BY r.started_at DESC, r.id DESC, f.rowid",
            [device],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
        )?;
        // (test, results, the last result counted), in order of first appearance.
        let mut tests: Vec<(String, usize, i64)> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for (test, id) in rows {
            match at.get(&test) {
                Some(&i) if tests[i].2 == id => {}
                Some(&i) => {
                    tests[i].1 += 1;
                    tests[i].2 = id;
                }
                None => {
                    at.insert(test.clone(), tests.len());
                    tests.push((test, 1, id));
                }
            }
        }
        // Stable: ties keep the newest result's order.
        tests.sort_by_key(|t| std::cmp::Reverse(t.1));
        Ok(tests.into_iter().map(|(t, n, _)| (t, n)).collect())
    }

    /// `PRAGMA integrity_check`: `ok`, or what is wrong.
    pub fn integrity_check(&self) -> anyhow::Result<String> {
        let lines = self.rows("PRAGMA integrity_check", [], |r| r.get::<_, String>(0))?;
        Ok(lines.join("; "))
    }

    /// The (time, id, figure) series of one test's metric on one device, oldest first.
    pub(super) fn series(
        &self,
        device: &str,
        test: &str,
        metric: &str,
    ) -> anyhow::Result<Vec<SeriesRow>> {
        self.rows(
            "SELECT r.id, r.started_at, r.command, r.status, f.test, f.metric, f.is_primary, f.n, f.mean,
                f.median, f.stddev, f.ci95_low, f.ci95_high, f.value, f.value_of
             FROM figures f JOIN results r ON r.id = f.result_id
             WHERE r.device = ?1 AND f.test = ?2 AND f.metric = ?3
             ORDER BY r.started_at, r.id",
            params![device, test, metric],
            |r| {
                Ok(SeriesRow {
                    id: r.get(0)?,
                    started_at: r.get(1)?,
                    command: r.get(2)?,
                    status: r.get(3)?,
                    figure: figure_at(r, 4)?,
                })
            },
        )
    }

    /// The metrics of `test` on `device`, the headline one first.
    pub(super) fn metrics(&self, device: &str, test: &str) -> anyhow::Result<Vec<String>> {
        self.rows(
            "SELECT f.metric, max(f.is_primary) AS p, count(*) AS n FROM figures f
             JOIN results r ON r.id = f.result_id
             WHERE r.device = ?1 AND f.test = ?2
             GROUP BY f.metric ORDER BY p DESC, n DESC, f.metric",
            params![device, test],
            |r| r.get(0),
        )
    }
}

fn insert_figures(tx: &Connection, id: i64, figures: &[Figure]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare_cached(
        "INSERT INTO figures (result_id, test, metric, is_primary, n, mean, median, stddev,
            ci95_low, ci95_high, value, value_of)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    for f in figures {
        ins.execute(params![
            id,
            f.test,
            f.metric,
            f.primary,
            f.n,
            f.mean,
            f.median,
            f.stddev,
            f.ci95_low,
            f.ci95_high,
            f.value,
            f.value_of
        ])?;
    }
    Ok(())
}

fn figure_of(r: &Row<'_>) -> rusqlite::Result<Figure> {
    figure_at(r, 0)
}

/// A figure row (its columns from `i` in the order of the `figures` table). A row the
/// re-index could not fill (a document this iolab cannot read) has no `value`: the median
/// stands for it, as the headline gave before `value` was stored.
fn figure_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Figure> {
    let median: f64 = r.get(i + 5)?;
    let value: Option<f64> = r.get(i + 9)?;
    let value_of: Option<String> = r.get(i + 10)?;
    Ok(Figure {
        test: r.get(i)?,
        metric: r.get(i + 1)?,
        primary: r.get(i + 2)?,
        n: r.get(i + 3)?,
        value: value.unwrap_or(median),
        value_of: match value {
            Some(_) => value_of.unwrap_or_else(|| "median".into()),
            None => "median".into(),
        },
        mean: r.get(i + 4)?,
        median,
        stddev: r.get(i + 6)?,
        ci95_low: r.get(i + 7)?,
        ci95_high: r.get(i + 8)?,
    })
}

/// Rows of a disk without a model that an older iolab keyed by its serial alone (`serial
/// S`: its documents have no size, so `device_identity` cannot say more of them) take the
/// identity of the newer rows of the same disk: same host, serial and kernel name, no model
/// (`virtio 256.0 GiB (serial S on HOST)`). Without it an SD card's or a virtual disk's
/// history split in two at the upgrade, and `--device S` matched both and asked to name one.
/// Kept apart: another host's rows (VMs made from one template share a serial) and another
/// kernel name (two disks of one host with one serial). Run after every insert and re-index,
/// as the re-index gives these rows their serial-only identity again. The number adopted.
fn adopt_serial_only_rows(tx: &Connection) -> rusqlite::Result<usize> {
    const NEWER: &str = "FROM results n
        WHERE n.host = results.host AND n.device_serial = results.device_serial
          AND n.block_device IS results.block_device
          AND coalesce(trim(n.device_model), '') = ''
          AND n.device <> results.device AND n.device LIKE '% (serial %'";
    tx.execute(
        &format!(
            "UPDATE results SET device = (SELECT n.device {NEWER} ORDER BY n.started_at DESC,
                n.id DESC LIMIT 1)
             WHERE coalesce(trim(device_model), '') = '' AND device_serial IS NOT NULL
               AND device = 'serial ' || device_serial AND EXISTS (SELECT 1 {NEWER})"
        ),
        [],
    )
}

/// A loop device's backing file as stored (without the kernel's " (deleted)").
fn loop_file(env: &crate::model::Environment) -> Option<&str> {
    env.loop_backing_file
        .as_deref()
        .map(|f| f.trim_end_matches(" (deleted)"))
}

/// The file system(s) a result measured: a matrix's own (the distinct types of its
/// configurations, `xfs,btrfs`), not the one holding its image files; else the target's.
fn filesystem_of(doc: &ResultDoc) -> Option<String> {
    if !doc.configurations.is_empty() {
        let mut types: Vec<&str> = Vec::new();
        for c in &doc.configurations {
            if !types.contains(&c.fs_type.as_str()) {
                types.push(&c.fs_type);
            }
        }
        return Some(types.join(","));
    }
    let fs = &doc.environment.fs_type;
    (!fs.is_empty()).then(|| fs.clone())
}

/// One result's figure in a trend: the result, its command and status, and the figure.
pub(super) struct SeriesRow {
    pub id: i64,
    pub started_at: String,
    pub command: String,
    pub status: String,
    pub figure: Figure,
}
