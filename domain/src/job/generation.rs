//! generateImage: the farm's side of `/generate-image`. The job only names its generation; what
//! to draw is on the generation's row. It has no input files, and a caller cannot submit it
//! through `/create-file-job`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Rates, Settings};
use crate::file::FileKind;
use crate::id::GenerationId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = GenerateImageOptions)]
pub struct GenerateImage {
    pub generation: GenerationId,
}

impl Settings for GenerateImage {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        None
    }

    fn input_count(&self) -> (usize, usize) {
        (0, 0)
    }

    fn rates(&self) -> Rates {
        // A provider takes its few seconds to a minute whatever the prompt.
        Rates {
            per_file: 30.0,
            bytes_per_second: f64::INFINITY,
        }
    }

    fn downloads(&self) -> bool {
        false
    }
}
