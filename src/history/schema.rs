//! The database's tables and their migrations, versioned by `PRAGMA user_version`, and the
//! checks that come before anything is written: a file that is not a database, another
//! program's database, or one written by a newer iolab is refused and left as it is.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::UsageError;

/// The schema this iolab writes. Bump it with a new entry in `MIGRATIONS`.
pub const SCHEMA_VERSION: u32 = 4;

/// `PRAGMA application_id`: "iolb", so another program's SQLite file is told apart.
pub const APPLICATION_ID: i32 = 0x696f_6c62;

/// How long a writer waits for another one (a command and the console at once) before it
/// gives up: the writes themselves take milliseconds.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// `MIGRATIONS[i]` takes a database from version `i` to `i + 1`. Never edit a released
/// entry: add one.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: results (the whole document plus indexed fields) and their figures.
    "CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        run_key TEXT NOT NULL UNIQUE,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        command TEXT NOT NULL,
        status TEXT NOT NULL,
        host TEXT NOT NULL,
        device TEXT NOT NULL,
        device_model TEXT,
        device_serial TEXT,
        device_wwn TEXT,
        block_device TEXT,
        target_path TEXT NOT NULL,
        filesystem TEXT,
        tool_version TEXT NOT NULL,
        doc_schema_version INTEGER NOT NULL,
        headline TEXT NOT NULL,
        health TEXT,
        source TEXT,
        recorded_at TEXT NOT NULL,
        doc TEXT NOT NULL
    );
    CREATE INDEX results_started ON results(started_at, id);
    CREATE INDEX results_device ON results(device, started_at);
    CREATE INDEX results_command ON results(command, started_at);
    CREATE TABLE figures (
        result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        test TEXT NOT NULL,
        metric TEXT NOT NULL,
        is_primary INTEGER NOT NULL,
        n INTEGER NOT NULL,
        mean REAL NOT NULL,
        median REAL NOT NULL,
        stddev REAL NOT NULL,
        ci95_low REAL NOT NULL,
        ci95_high REAL NOT NULL,
        PRIMARY KEY (result_id, test, metric)
    );
    CREATE INDEX figures_test ON figures(test, metric);",
    // 1 -> 2: facts about the database itself; `extract_version` says which extractor
    // indexed the stored documents (`store::EXTRACT_VERSION`).
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    // 2 -> 3: the options that tell two runs of one command apart (`--preset real --size
    // 1G`), a disk's `/dev/disk` link and a loop's backing file. NULL until the re-index
    // (`store::EXTRACT_VERSION` 4) fills them, and `device` again, from the documents.
    "ALTER TABLE results ADD COLUMN options TEXT;
    ALTER TABLE results ADD COLUMN device_link TEXT;
    ALTER TABLE results ADD COLUMN loop_backing_file TEXT;",
    // 3 -> 4: each figure as its command's table gives it (`value`: the median of the
    // runs, a files test's mean, a peak test's best run) and which that is (`value_of`).
    // NULL until the re-index (`store::EXTRACT_VERSION` 5) fills them from the documents.
    "ALTER TABLE figures ADD COLUMN value REAL;
    ALTER TABLE figures ADD COLUMN value_of TEXT;",
];

/// What every refusal of a file that is not an iolab history ends with: it was not
/// touched, and what to do instead.
const LEFT_ALONE: &str =
    "it was left as it is: move it away, or use --history PATH or --no-history";

/// An error of the database as the user should read it: damage, a missing permission or
/// an unopenable path are usage errors (exit 2) that say the file was left alone.
pub fn db_error(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    let code = e.sqlite_error_code();
    let p = path.display();
    match code {
        Some(ErrorCode::NotADatabase) => UsageError(format!(
            "{p}: not an iolab history database ({e}); {LEFT_ALONE}"
        ))
        .into(),
        Some(ErrorCode::DatabaseCorrupt) => UsageError(format!(
            "{p}: the history database is damaged ({e}); it was left as it is: move it away (sqlite3 {p} .recover may save its rows), or use --history PATH or --no-history"
        ))
        .into(),
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            UsageError(format!("{p}: cannot write the history database ({e})")).into()
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => anyhow::anyhow!(
            "{p}: the history database stayed locked by another iolab for {} s ({e})",
            BUSY_TIMEOUT.as_secs()
        ),
        _ => anyhow::anyhow!("{p}: history database: {e}"),
    }
}

/// Open (creating the file and its directory when missing), refuse what is not ours or is
/// newer, switch to WAL and migrate to `SCHEMA_VERSION`.
pub fn open(path: &Path) -> anyhow::Result<Connection> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        std::fs::create_dir_all(dir).map_err(|e| {
            UsageError(format!(
                "cannot create the history directory {}: {e}",
                dir.display()
            ))
        })?;
    }
    if path.is_dir() {
        return Err(UsageError(format!(
            "{}: is a directory; --history takes the database file's path",
            path.display()
        ))
        .into());
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| db_error(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| db_error(path, e))?;
    // Read-only checks first: nothing is written to a file that is refused.
    let version = user_version(&conn).map_err(|e| db_error(path, e))?;
    refuse_foreign(&conn, path, version)?;
    if version > SCHEMA_VERSION {
        return Err(UsageError(format!(
            "{}: the history database has schema version {version}, newer than this iolab understands ({SCHEMA_VERSION}); it was left as it is: upgrade iolab, or use --history PATH or --no-history",
            path.display()
        ))
        .into());
    }
    // WAL: readers never block the writer and two writers wait for each other (busy
    // timeout) instead of failing. NORMAL sync is safe against a crash of iolab in WAL.
    let _mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(|e| db_error(path, e))?;
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        .map_err(|e| db_error(path, e))?;
    if version < SCHEMA_VERSION {
        migrate(&conn).map_err(|e| match e.downcast::<rusqlite::Error>() {
            Ok(e) => db_error(path, e),
            Err(e) => e,
        })?;
    }
    Ok(conn)
}

/// An empty history in memory, for reading a database that does not exist (nothing is
/// created on disk by a command that only reads).
pub fn open_empty() -> anyhow::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    migrate(&conn)?;
    Ok(conn)
}

fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
        .map(|v| v.max(0) as u32)
}

/// Another program's database (its own application id, or tables and no iolab version).
fn refuse_foreign(conn: &Connection, path: &Path, version: u32) -> anyhow::Result<()> {
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| db_error(path, e))?;
    if app != 0 && app != APPLICATION_ID {
        return Err(UsageError(format!(
            "{}: a SQLite database of another program (application_id {app:#x}), not an iolab history; {LEFT_ALONE}",
            path.display()
        ))
        .into());
    }
    if app == 0 && version == 0 {
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| db_error(path, e))?;
        if tables > 0 {
            return Err(UsageError(format!(
                "{}: a SQLite database with {tables} table{} that is not an iolab history; {LEFT_ALONE}",
                path.display(),
                if tables == 1 { "" } else { "s" }
            ))
            .into());
        }
    }
    Ok(())
}

/// Apply the missing migrations in one immediate transaction (a second process migrating
/// at the same time waits, then finds the work done).
fn migrate(conn: &Connection) -> anyhow::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let r = (|| -> anyhow::Result<()> {
        let from = user_version(conn)?;
        if from > SCHEMA_VERSION {
            anyhow::bail!("a newer iolab migrated the database meanwhile (version {from})");
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
            conn.execute_batch(sql)?;
            conn.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        }
        conn.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))?;
        Ok(())
    })();
    match r {
        Ok(()) => {
            conn.execute_batch("COMMIT")?;
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_migrations_reach_the_schema_version() {
        assert_eq!(MIGRATIONS.len(), SCHEMA_VERSION as usize);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.sqlite");
        let c = open(&p).unwrap();
        assert_eq!(user_version(&c).unwrap(), SCHEMA_VERSION);
        drop(c);
        // Opening again changes nothing.
        let c = open(&p).unwrap();
        assert_eq!(user_version(&c).unwrap(), SCHEMA_VERSION);
    }
}
