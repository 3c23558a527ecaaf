//! Lanes: where a job waits, by what it is. The farm takes from the lanes by weight, so a
//! backlog in one (ten thousand readings after a big upload, a folder-wide job) does not hold
//! up the next job of another (`crate::db::jobs::claim`).

use serde::{Deserialize, Serialize};

use super::{JobSpec, JobType};

/// More input files than this make a caller's job bulk work.
pub const FEW_FILES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    /// What a caller asked for on a few files, and waits for.
    Interactive,
    /// The drive's own work on what arrives: metadata readings, posters.
    System,
    /// Work on many files at once: folder-wide jobs, archives, readings of many files.
    Bulk,
}

impl Lane {
    /// Every lane, in the order a tie between them is broken.
    pub const ALL: [Lane; 3] = [Lane::Interactive, Lane::System, Lane::Bulk];

    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Interactive => "interactive",
            Lane::System => "system",
            Lane::Bulk => "bulk",
        }
    }

    pub fn parse(s: &str) -> Option<Lane> {
        Lane::ALL.into_iter().find(|lane| lane.as_str() == s)
    }

    /// The lane of a job of `spec` on `inputs` files, `on_folder` when it was asked for on a
    /// whole folder.
    pub fn of(spec: &JobSpec, inputs: usize, on_folder: bool) -> Lane {
        // A chain is bulk work when any of its steps is.
        if let JobSpec::Pipeline(chain) = spec {
            let bulk = chain
                .steps
                .iter()
                .any(|step| Lane::of(&step.spec, inputs, on_folder) == Lane::Bulk);
            return if bulk { Lane::Bulk } else { Lane::Interactive };
        }
        match spec.job_type() {
            JobType::ReadMetadata | JobType::VideoThumbnail => Lane::System,
            JobType::Zip | JobType::Unzip => Lane::Bulk,
            _ if on_folder || inputs > FEW_FILES => Lane::Bulk,
            _ => Lane::Interactive,
        }
    }
}

crate::column::text_column!(Lane, "lane");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::ReadMetadata;

    #[test]
    fn a_job_waits_in_the_lane_of_what_it_is() {
        let metadata = JobSpec::ReadMetadata(ReadMetadata {});
        let checksum = JobSpec::parse(JobType::Checksum, serde_json::json!({})).unwrap();
        assert_eq!(Lane::of(&metadata, 1, false), Lane::System);
        assert_eq!(Lane::of(&checksum, 1, false), Lane::Interactive);
        assert_eq!(Lane::of(&checksum, FEW_FILES, false), Lane::Interactive);
        assert_eq!(Lane::of(&checksum, FEW_FILES + 1, false), Lane::Bulk);
        assert_eq!(Lane::of(&checksum, 1, true), Lane::Bulk);
        for lane in Lane::ALL {
            assert_eq!(Lane::parse(lane.as_str()), Some(lane));
        }
    }
}
