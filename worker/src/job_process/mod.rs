//! The job process: `drive-worker run-job`, started confined by its supervisor, parses the
//! uploaded bytes of one job and holds no credential. Everything here runs in that process; it
//! reaches the drive only through its supervisor ([`crate::protocol`]).

pub mod archive;
pub mod av;
pub mod checksum;
pub mod context;
pub mod imports;
pub mod metadata;
pub mod objects;
pub mod pdfs;
pub mod pictures;
pub mod reading;
pub mod run;
