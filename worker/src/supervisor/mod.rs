//! The supervisor: `drive-worker work`, which holds every key and never parses an uploaded byte.
//! It takes jobs from the farm's lanes, starts a confined job process for each
//! ([`crate::job_process`]) and answers its requests ([`crate::protocol`]), and runs the loops
//! beside the jobs (upkeep, webhooks, agent tasks, metrics).

pub mod agent;
pub mod agent_model;
pub mod chat;
pub mod farm;
pub mod generation;
pub mod local_models;
pub mod metrics;
pub mod pauses;
pub mod process;
pub mod settings;
pub mod shared;
pub mod steward;
pub mod turns;
pub mod upkeep;
pub mod vision;
pub mod webhooks;
pub mod work_folders;
