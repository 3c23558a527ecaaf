//! Prometheus metrics of the API at `GET /metrics` on `DRIVE_METRICS_LISTEN` (off when unset;
//! never on the public listener), in the text exposition format 0.0.4: requests by
//! route, method and status with their latency as a histogram, counted by a layer around every
//! route; the bytes of files recorded by uploads; answers the object store failed; moments
//! read into memory for searching inside files; and, read
//! from the database when scraped, jobs by type and state, the seconds ended jobs took, and
//! each lane's queued, running and oldest waiting jobs (`drive_farm_*`, for an autoscaler).
//! Labels are the route's pattern (`/p/{id}`), never a raw path, so a caller
//! cannot grow the set.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use drive_core::db::PgPool;
use drive_core::db::jobs::{self, LaneGauge};
use drive_core::metrics::Histogram;

use crate::error::ApiResult;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Every request's route, method and status, and how long it took.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), Histogram<{ BUCKETS.len() }>>>,
    uploaded_bytes: AtomicU64,
}

impl Metrics {
    /// A file of `bytes` recorded by an upload (a form, multipart, a request's sender).
    pub fn uploaded(&self, bytes: i64) {
        self.uploaded_bytes
            .fetch_add(bytes.max(0) as u64, Ordering::Relaxed);
    }

    fn observe(&self, route: String, method: String, status: u16, seconds: f64) {
        let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        requests
            .entry((route, method, status))
            .or_insert_with(|| Histogram::new(&BUCKETS))
            .observe(seconds);
    }

    fn render_requests(&self, out: &mut String) {
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        out.push_str("# HELP drive_http_requests_total Requests answered, by route, method and status.\n");
        out.push_str("# TYPE drive_http_requests_total counter\n");
        for ((route, method, status), series) in requests.iter() {
            let _ = writeln!(
                out,
                "drive_http_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {}",
                series.count()
            );
        }
        out.push_str("# HELP drive_http_request_seconds Time to answer, by route and method.\n");
        out.push_str("# TYPE drive_http_request_seconds histogram\n");
        let mut by_route: BTreeMap<(&str, &str), Histogram<{ BUCKETS.len() }>> = BTreeMap::new();
        for ((route, method, _), series) in requests.iter() {
            by_route
                .entry((route, method))
                .or_insert_with(|| Histogram::new(&BUCKETS))
                .add(series);
        }
        for ((route, method), series) in by_route {
            let labels = format!("route=\"{route}\",method=\"{method}\"");
            series.write(out, "drive_http_request_seconds", &labels);
        }
    }
}

/// The layer that counts every request by its route's pattern.
pub async fn count(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_string();
    // A caller may send any method name: those outside HTTP's own are one label.
    let method = match *request.method() {
        Method::GET
        | Method::POST
        | Method::PUT
        | Method::DELETE
        | Method::HEAD
        | Method::OPTIONS
        | Method::PATCH => request.method().as_str().to_string(),
        _ => "other".to_string(),
    };
    let started = Instant::now();
    let response = next.run(request).await;
    metrics.observe(
        route,
        method,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// `GET /metrics`, on the metrics listener only: open to whoever reaches that address (the
/// operator's network), so not rate-limited.
pub async fn scrape(State(metrics): State<Arc<Metrics>>, State(db): State<PgPool>) -> ApiResult<Response> {
    let mut out = String::new();
    metrics.render_requests(&mut out);
    let counters = [
        (
            "drive_upload_bytes_total",
            "Bytes of the files uploads recorded.",
            metrics.uploaded_bytes.load(Ordering::Relaxed),
        ),
        (
            "drive_store_errors_total",
            "Calls to the object store this process made that failed.",
            drive_core::storage::failures(),
        ),
        (
            "drive_search_moments_read_total",
            "Moments of searched accounts this process read from the database into memory.",
            crate::moment_index::moments_read(),
        ),
    ];
    for (name, help, value) in counters {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}");
    }
    let jobs: Vec<(String, String, i64, f64)> = sqlx::query_as(
        "select job_type, state, count(*), coalesce(sum(seconds), 0)::float8
         from file_jobs group by job_type, state order by job_type, state",
    )
    .fetch_all(&db)
    .await?;
    out.push_str("# HELP drive_jobs Jobs in the database, by type and state.\n# TYPE drive_jobs gauge\n");
    for (job_type, job_state, n, _) in &jobs {
        let _ = writeln!(out, "drive_jobs{{type=\"{job_type}\",state=\"{job_state}\"}} {n}");
    }
    out.push_str("# HELP drive_job_seconds Seconds ended jobs took, by type and state.\n# TYPE drive_job_seconds gauge\n");
    for (job_type, job_state, _, seconds) in &jobs {
        let _ = writeln!(
            out,
            "drive_job_seconds{{type=\"{job_type}\",state=\"{job_state}\"}} {seconds}"
        );
    }
    // What an autoscaler reads, per lane: the same series every worker serves.
    out.push_str(&LaneGauge::render(&jobs::gauges(&db).await?));
    Ok(([("content-type", "text/plain; version=0.0.4")], out).into_response())
}
