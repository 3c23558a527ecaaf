//! Drive's core: the domain types, the database queries, the object-store client and URL
//! signing. No HTTP framework and no media code lives here, so the API, the worker and the
//! admin commands share one definition of every rule.

pub mod a2a;
pub mod access;
pub mod column;
pub mod config;
pub mod db;
pub mod entry;
pub mod file;
pub mod folder;
pub mod generation;
pub mod id;
pub mod input;
pub mod job;
pub mod job_end;
pub mod maintenance;
pub mod metadata;
pub mod multipart;
pub mod plan;
pub mod queue;
pub mod read;
pub mod records;
pub mod rewrites;
pub mod scope;
pub mod sealed;
pub mod storage;
pub mod token;

pub use config::ConfigError;
