//! How a process that parses uploaded bytes (a worker's job process, the API's reader) is
//! narrowed with what Linux lets an unprivileged process do to itself: between fork and exec,
//! no new privileges, no capabilities and a seccomp filter ([`narrow`]); once it is handed its
//! work, a Landlock rule set over the file system, TCP and what it may signal ([`restrict`]).
//! It is started by [`command`], with an empty environment and its limits, by the worker (its
//! job processes) and the API (its reader) alike.

mod command;
mod landlock;
mod seccomp;
#[cfg(test)]
mod tests;

pub use command::{Limits, command};
pub use landlock::{Restricted, restrict};
pub use seccomp::{filter, narrow};
