//! Picture pipelines.
