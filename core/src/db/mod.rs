//! Database queries, one module per table family. SQL is written out in full so it can be
//! read next to the migrations; rows come back as plain structs.

pub mod agent_push;
pub mod agent_tasks;
pub mod agent_waits;
pub mod collections;
pub mod digests;
pub mod events;
pub mod files;
pub mod folders;
pub mod forms;
pub mod generations;
pub mod job_notices;
pub mod jobs;
pub mod locks;
pub mod moments;
pub mod oauth;
pub mod requests;
pub mod reservations;
pub mod reviews;
pub mod rules;
pub mod search;
pub mod shares;
pub mod sign_ins;
pub mod subscriptions;
pub mod tags;
pub mod templates;
pub mod uploads;
pub mod users;
pub mod views;

pub use sqlx::PgPool;

/// Connects to PostgreSQL with a pool sized for an API process.
pub async fn connect(url: &str) -> Result<PgPool, sqlx::Error> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(20)
        .acquire_timeout(std::time::Duration::from_secs(5))
        .connect(url)
        .await
}

/// The migrations in `migrations/`, embedded at build time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");
