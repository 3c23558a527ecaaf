//! Plans: what an account may store and how many job minutes a month it gets.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::config::{self, ConfigError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum Plan {
    Intro,
    Basic,
    Pro,
}

impl Plan {
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Intro => "Intro",
            Plan::Basic => "Basic",
            Plan::Pro => "Pro",
        }
    }

    pub fn parse(s: &str) -> Option<Plan> {
        [Plan::Intro, Plan::Basic, Plan::Pro]
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
    }
}

crate::column::text_column!(Plan, "plan");

const GIB: i64 = 1024 * 1024 * 1024;

/// Storage quota per plan, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Quotas {
    pub intro: i64,
    pub basic: i64,
    pub pro: i64,
}

impl Quotas {
    /// Reads `DRIVE_QUOTA_INTRO_BYTES` (default 50 GiB), `DRIVE_QUOTA_BASIC_BYTES`
    /// (default 2 TiB) and `DRIVE_QUOTA_PRO_BYTES` (default 10 TiB).
    pub fn from_environment() -> Result<Quotas, ConfigError> {
        Ok(Quotas {
            intro: config::parsed_or("DRIVE_QUOTA_INTRO_BYTES", 50 * GIB)?,
            basic: config::parsed_or("DRIVE_QUOTA_BASIC_BYTES", 2048 * GIB)?,
            pro: config::parsed_or("DRIVE_QUOTA_PRO_BYTES", 10 * 1024 * GIB)?,
        })
    }

    pub fn for_plan(&self, plan: Plan) -> i64 {
        match plan {
            Plan::Intro => self.intro,
            Plan::Basic => self.basic,
            Plan::Pro => self.pro,
        }
    }
}

/// Monthly file-job minutes per plan.
#[derive(Debug, Clone, Copy)]
pub struct JobMinutes {
    pub intro: f64,
    pub basic: f64,
    pub pro: f64,
}

impl JobMinutes {
    /// Reads `DRIVE_JOB_MINUTES_INTRO`, `_BASIC` and `_PRO` (defaults 60, 240 and 900, as the
    /// spec's Limits table sets them; fractions allowed).
    pub fn from_environment() -> Result<JobMinutes, ConfigError> {
        Ok(JobMinutes {
            intro: config::parsed_or("DRIVE_JOB_MINUTES_INTRO", 60.0)?,
            basic: config::parsed_or("DRIVE_JOB_MINUTES_BASIC", 240.0)?,
            pro: config::parsed_or("DRIVE_JOB_MINUTES_PRO", 900.0)?,
        })
    }

    pub fn for_plan(&self, plan: Plan) -> f64 {
        match plan {
            Plan::Intro => self.intro,
            Plan::Basic => self.basic,
            Plan::Pro => self.pro,
        }
    }
}
