//! The end-to-end suite, one module per area, in one binary: every area links the whole stack,
//! and linking it once instead of once per area saves minutes on two cores.

mod agent;
mod artwork;
mod auth;
mod cli;
mod collections;
mod content_search;
mod contract;
mod errors;
mod events;
mod faults;
mod files;
mod folders;
mod generations;
mod hardening;
mod imports;
mod isolation;
mod job_av;
mod job_media;
mod jobs;
mod mcp;
mod metadata;
mod multipart;
mod openapi;
mod operations;
mod pages;
mod read;
mod reading;
mod requests;
mod reviews;
mod search;
mod sweep;
mod tags;
mod upload_form;
mod views;
mod webhooks;
