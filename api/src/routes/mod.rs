//! One module per section of the spec, each with its own `router()`.

pub mod artwork;
pub mod auth;
pub mod collections;
pub mod connections;
pub mod download;
pub mod events;
pub mod files;
pub mod folders;
pub mod generations;
pub mod health;
pub mod imports;
pub mod jobs;
pub mod library;
pub mod multipart;
pub mod organize;
pub mod read;
pub mod requests;
pub mod reviews;
pub mod rules;
pub mod search;
pub mod subscriptions;
pub mod templates;
pub mod trash;
pub mod upload;
pub mod version;
pub mod views;
