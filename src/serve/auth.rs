//! Who may talk to the console: the `Host` must name this server (DNS rebinding), every
//! request must carry the token (`?token=` once, then the `iolab_token_PORT` cookie, or an
//! `Authorization: Bearer` header), and a request that changes anything (any method but
//! GET/HEAD) must come from the console's own page (`Origin`, else `Referer`, equal to
//! `http://HOST`). 401 without a token, 403 for a wrong one or a foreign origin.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;

/// The cookie's name: one per port, so two consoles on one machine keep their own.
fn cookie_name(port: u16) -> String {
    format!("iolab_token_{port}")
}

/// Equal strings, compared in time independent of where they differ.
fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token a request carries, and where: the query, the cookie or the header.
fn presented(req: &Request, cookie: &str) -> Option<(String, bool)> {
    if let Some(q) = req.uri().query() {
        for pair in q.split('&') {
            if let Some(v) = pair.strip_prefix("token=") {
                return Some((v.to_string(), true));
            }
        }
    }
    let h = req.headers();
    for c in h.get_all(header::COOKIE) {
        for part in c.to_str().unwrap_or("").split(';') {
            if let Some(v) = part.trim().strip_prefix(&format!("{cookie}=")) {
                return Some((v.to_string(), false));
            }
        }
    }
    h.get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|v| (v.trim().to_string(), false))
}

fn refuse(code: StatusCode, why: &str) -> Response {
    let body = format!(
        "<!doctype html><title>iolab serve</title><p>{}: {why}</p>",
        code.as_u16()
    );
    (
        code,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Does the request come from a page of this server (`Origin` or `Referer`)?
fn same_origin(h: &HeaderMap, host: &str) -> bool {
    let own = format!("http://{host}");
    if let Some(o) = h.get(header::ORIGIN) {
        return o.to_str().is_ok_and(|o| o == own);
    }
    h.get(header::REFERER)
        .and_then(|r| r.to_str().ok())
        .is_some_and(|r| r == own || r.starts_with(&format!("{own}/")))
}

pub async fn check(State(s): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_string();
    if let Some(hosts) = &s.hosts
        && !hosts.iter().any(|h| h.eq_ignore_ascii_case(&host))
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "this server does not answer to that Host name",
        );
    }
    let Some((token, from_query)) = presented(&req, &cookie_name(s.port)) else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "open the URL that iolab serve printed (it carries the token)",
        );
    };
    if !same_secret(&token, &s.token) {
        return refuse(StatusCode::FORBIDDEN, "wrong token");
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) && !same_origin(req.headers(), &host) {
        return refuse(
            StatusCode::FORBIDDEN,
            "a request that changes something must come from the console's own page",
        );
    }
    let page = from_query && *req.method() == Method::GET && !req.uri().path().starts_with("/api/");
    let path = req.uri().path().to_string();
    let mut resp = if page {
        // The token leaves the address bar: a cookie carries it from now on.
        (StatusCode::SEE_OTHER, [(header::LOCATION, path)]).into_response()
    } else {
        next.run(req).await
    };
    if from_query {
        let cookie = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            cookie_name(s.port),
            s.token
        );
        if let Ok(v) = cookie.parse() {
            resp.headers_mut().insert(header::SET_COOKIE, v);
        }
    }
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    resp.headers_mut().insert(
        header::X_FRAME_OPTIONS,
        axum::http::HeaderValue::from_static("DENY"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }

    #[test]
    fn origin_must_be_this_host() {
        let mut h = HeaderMap::new();
        assert!(!same_origin(&h, "127.0.0.1:1"));
        h.insert(header::REFERER, "http://127.0.0.1:1/x".parse().unwrap());
        assert!(same_origin(&h, "127.0.0.1:1"));
        h.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(!same_origin(&h, "127.0.0.1:1"));
        h.insert(header::ORIGIN, "http://127.0.0.1:1".parse().unwrap());
        assert!(same_origin(&h, "127.0.0.1:1"));
        h.insert(header::ORIGIN, "http://127.0.0.1:12".parse().unwrap());
        assert!(!same_origin(&h, "127.0.0.1:1"));
    }
}
