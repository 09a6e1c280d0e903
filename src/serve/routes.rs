//! The console's routes, all behind `auth::check`. Pages are one HTML file with its script
//! and style (embedded, no build step); everything else is JSON under `/api/`, and report
//! downloads by result id. `tests/serve.rs` reads this file to try every route without the
//! token.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use super::results::{self, Missing};
use super::{AppState, auth, forms, history, machine};

type S = State<Arc<AppState>>;
type Q = Query<HashMap<String, String>>;

const INDEX_HTML: &str = include_str!("static/index.html");
const APP_JS: &str = include_str!("static/app.js");
const APP_CSS: &str = include_str!("static/app.css");

pub fn router(s: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/static/app.js", get(app_js))
        .route("/static/app.css", get(app_css))
        .route("/api/form", get(api_form))
        .route("/api/machine", get(api_machine))
        .route("/api/info", get(api_info))
        .route("/api/runs", get(api_runs).post(api_start))
        .route("/api/runs/{id}", get(api_run))
        .route("/api/runs/{id}/stop", post(api_stop))
        .route("/api/history", get(api_history))
        .route("/api/results/{id}", get(api_result))
        .route("/api/results/{id}/report/{format}", get(api_report))
        .route("/api/compare", get(api_compare))
        .route("/api/trend", get(api_trend))
        .route("/api/trend/devices", get(api_trend_devices))
        .route("/api/health", get(api_health))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(&s), auth::check))
        .with_state(s)
}

fn error(code: StatusCode, msg: impl Into<String>) -> Response {
    (code, axum::Json(json!({ "error": msg.into() }))).into_response()
}

fn missing(m: Missing) -> Response {
    match m {
        Missing::NotFound(e) => error(StatusCode::NOT_FOUND, e),
        Missing::Broken(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

fn ok<T: serde::Serialize>(v: T) -> Response {
    axum::Json(v).into_response()
}

/// The JSON of blocking work that can fail, or its error with status `failed`.
async fn answer<T: serde::Serialize + Send + 'static, E: Into<String> + Send + 'static>(
    failed: StatusCode,
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Response {
    match blocking(f).await {
        Ok(Ok(v)) => ok(v),
        Ok(Err(e)) => error(failed, e),
        Err(r) => r,
    }
}

/// Blocking work over saved results: its value, or the answer for a result that is missing
/// or unreadable.
async fn on_results<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Missing> + Send + 'static,
) -> Result<T, Response> {
    match blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(m)) => Err(missing(m)),
        Err(r) => Err(r),
    }
}

/// Run blocking work (sysfs, smartctl, SQLite, file reads) off the server's thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page")
}

async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
            ),
        ],
        INDEX_HTML,
    )
        .into_response()
}

async fn app_js() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        APP_JS,
    )
        .into_response()
}

async fn app_css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS).into_response()
}

/// The test form: commands, options, each option's choices (the command line's own).
async fn api_form() -> Response {
    ok(forms::spec())
}

async fn api_machine() -> Response {
    match blocking(machine::machine).await {
        Ok(m) => ok(m),
        Err(r) => r,
    }
}

async fn api_info(Query(q): Q) -> Response {
    let path = q.get("path").cloned().unwrap_or_default();
    answer(StatusCode::BAD_REQUEST, move || machine::info(&path)).await
}

async fn api_runs(State(s): S) -> Response {
    let v: Vec<_> = s
        .jobs
        .all()
        .iter()
        .rev()
        .map(|j| j.view(usize::MAX))
        .collect();
    ok(v)
}

/// Start a test from the form: plan the argv, check it with the command's own checks, start
/// the child. 400 with the command line's message when the checks say no, 409 when a test
/// of the console already runs on the target.
async fn api_start(State(s): S, body: Bytes) -> Response {
    let form: forms::StartForm = match serde_json::from_slice(&body) {
        Ok(f) => f,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("bad form: {e}")),
    };
    let plan = match forms::plan(&form) {
        Ok(p) => p,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    // The console's own test on the target first (its message names the run to stop).
    if let Err(e) = s.jobs.conflict(&plan) {
        return error(StatusCode::CONFLICT, e);
    }
    let output = s.jobs.output().to_path_buf();
    let checked = {
        let plan = plan.clone();
        blocking(move || {
            forms::validate(&plan, &output).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
            // Another iolab run on the target (from a terminal, another console): say so now.
            forms::target_free(&plan).map_err(|e| (StatusCode::CONFLICT, e))?;
            forms::target_lockable(&plan).map_err(|e| (StatusCode::BAD_REQUEST, e))
        })
        .await
    };
    match checked {
        Ok(Ok(())) => {}
        Ok(Err((code, e))) => return error(code, e),
        Err(r) => return r,
    }
    match s.jobs.start(&plan) {
        Ok(j) => ok(j.view(0)),
        Err(e) => error(StatusCode::CONFLICT, e),
    }
}

fn job_id(id: &str) -> Option<u32> {
    super::results::id_number(id, "run-").and_then(|n| u32::try_from(n).ok())
}

async fn api_run(State(s): S, Path(id): Path<String>, Query(q): Q) -> Response {
    let since = q.get("since").and_then(|v| v.parse().ok()).unwrap_or(0);
    match job_id(&id).and_then(|n| s.jobs.get(n)) {
        Some(j) => ok(j.view(since)),
        None => error(StatusCode::NOT_FOUND, format!("{id}: no such run")),
    }
}

async fn api_stop(State(s): S, Path(id): Path<String>) -> Response {
    match job_id(&id).and_then(|n| s.jobs.get(n)) {
        Some(j) => {
            let stopped = j.stop();
            ok(json!({ "id": id, "stopping": stopped }))
        }
        None => error(StatusCode::NOT_FOUND, format!("{id}: no such run")),
    }
}

/// The list; in `X-Total-Count` how many results pass the filters without the limit, in
/// `X-Held-Count` how many the history holds, and in `X-Figure-Meaning` what a headline
/// figure is (the line `iolab history` prints under its list).
async fn api_history(State(s): S, Query(q): Q) -> Response {
    match blocking(move || history::list_filtered(&s, &q)).await {
        Ok(Ok(l)) => {
            let mut r = ok(l.entries);
            let h = r.headers_mut();
            h.insert("x-total-count", l.total.into());
            h.insert("x-held-count", l.held.into());
            h.insert(
                "x-figure-meaning",
                header::HeaderValue::from_static(crate::report::history::FIGURE_MEANING),
            );
            r
        }
        Ok(Err(e)) => error(StatusCode::BAD_REQUEST, e),
        Err(r) => r,
    }
}

async fn api_result(State(s): S, Path(id): Path<String>) -> Response {
    match on_results(move || results::load(&s, &id)).await {
        Ok(l) => ok(l.doc),
        Err(r) => r,
    }
}

async fn api_report(State(s): S, Path((id, format)): Path<(String, String)>) -> Response {
    let r = on_results(move || {
        let l = results::load(&s, &id)?;
        results::report(&l, &id, &format).ok_or_else(|| {
            Missing::NotFound(format!(
                "{format}: not a report format (html, md, csv, json)"
            ))
        })
    })
    .await;
    match r {
        Ok((ctype, name, body)) => (
            [
                (header::CONTENT_TYPE, ctype.to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{name}\""),
                ),
            ],
            body,
        )
            .into_response(),
        Err(r) => r,
    }
}

async fn api_compare(State(s): S, Query(q): Q) -> Response {
    let (Some(a), Some(b)) = (q.get("a").cloned(), q.get("b").cloned()) else {
        return error(StatusCode::BAD_REQUEST, "compare needs a=ID and b=ID");
    };
    let r = on_results(move || {
        let a = results::load(&s, &a)?;
        let b = results::load(&s, &b)?;
        Ok(results::compare(a, b))
    })
    .await;
    match r {
        Ok(Ok(v)) => ok(v),
        Ok(Err(e)) => error(StatusCode::BAD_REQUEST, e),
        Err(r) => r,
    }
}

async fn api_trend(State(s): S, Query(q): Q) -> Response {
    answer(StatusCode::BAD_REQUEST, move || history::trend(&s, &q)).await
}

async fn api_trend_devices(State(s): S) -> Response {
    answer(StatusCode::INTERNAL_SERVER_ERROR, move || {
        history::devices(&s)
    })
    .await
}

async fn api_health(State(s): S, Query(q): Q) -> Response {
    answer(StatusCode::BAD_REQUEST, move || history::health(&s, &q)).await
}
