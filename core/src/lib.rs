//! Drive's data: the database queries, the object store, the queue and the use cases built on
//! them (a file entering the drive, a job's end, access, rewrites, the sweep). The words they
//! speak are `drive-domain`'s, re-exported here under their old paths so a caller names one
//! crate. No HTTP framework and no media code lives here.

pub mod access;
pub mod copies;
pub mod db;
pub mod entry;
pub mod job_end;
pub mod maintenance;
pub mod metrics;
pub mod mirror;
pub mod multipart;
pub mod people;
pub mod queue;
pub mod records;
pub mod rewrites;
pub mod sealed;
pub mod storage;
pub mod token;
pub mod totp;

pub use drive_domain::{
    ConfigError, a2a, config, event, file, folder, generation, id, input, job, metadata, moment, plan, read,
    rows, scope, upload,
};
