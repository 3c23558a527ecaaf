//! Drive's vocabulary: the words the API, the worker, the job process, the confined reader and
//! the image generators share. Typed ids, inputs and their limits, job specs and lanes, plans,
//! generations, the A2A and `/read-file` protocols, and the shapes of the rows the data crate
//! reads. Nothing here reaches a database, the store or the queue; the `sqlx` feature only adds
//! the derives the data crate (`drive-core`) reads rows with.

pub mod a2a;
pub mod column;
pub mod config;
pub mod event;
pub mod file;
pub mod folder;
pub mod generation;
pub mod id;
pub mod input;
pub mod job;
pub mod metadata;
pub mod moment;
pub mod plan;
pub mod read;
pub mod rows;
pub mod scope;
pub mod upload;

pub use config::ConfigError;
