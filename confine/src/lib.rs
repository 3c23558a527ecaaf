//! How a process that parses uploaded bytes (a worker's job process, the API's reader) is
//! narrowed with what Linux lets an unprivileged process do to itself: between fork and exec,
//! no new privileges, no capabilities and a seccomp filter ([`narrow`]); once it is handed its
//! work, a Landlock rule set over the file system, TCP and what it may signal ([`restrict`]).
//! Its empty environment and its limits are set where it is started (the worker's `farm`, the
//! API's `reader`).

mod landlock;
mod seccomp;
#[cfg(test)]
mod tests;

pub use landlock::{Restricted, restrict};
pub use seccomp::{filter, narrow};
