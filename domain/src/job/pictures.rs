//! Jobs on pictures: watermark (convert of pictures is in `convert`), and the picture formats
//! jobs write.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings, SettingsError, check_text, out_of_range};
use crate::file::FileKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PictureFormat {
    #[serde(alias = "jpeg")]
    Jpg,
    Png,
    Webp,
}

/// What a convert makes: a picture, video or audio format; inputs are of that kind.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Position {
    TopLeft,
    Top,
    TopRight,
    Left,
    Center,
    Right,
    BottomLeft,
    Bottom,
    #[default]
    BottomRight,
}

fn half() -> f32 {
    0.5
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = WatermarkOptions)]
pub struct Watermark {
    /// 1 to 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub text: String,
    #[serde(default)]
    pub position: Position,
    /// 0 (invisible) to 1; default 0.5.
    #[serde(default = "half")]
    #[schema(minimum = 0, maximum = 1)]
    pub opacity: f32,
}

impl Settings for Watermark {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(&[FileKind::Image])
    }

    fn check(&self) -> Result<(), SettingsError> {
        check_text("options.text", &self.text)?;
        if !(0.0..=1.0).contains(&self.opacity) {
            return Err(out_of_range("options.opacity", "opacity is 0 to 1"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        Rates {
            per_file: 0.3,
            bytes_per_second: 30.0 * MB,
        }
    }
}
