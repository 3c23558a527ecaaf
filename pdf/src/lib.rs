//! PDF pipelines.
