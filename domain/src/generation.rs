//! Image generation's vocabulary and the plan's rules over it: the models a caller may ask for,
//! the aspect ratios and qualities each takes, which choices are Pro's alone, and how many
//! images a month each plan makes. The API checks a request with these; the worker reads the
//! same values back from the generation's row.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::config::{self, ConfigError};
use crate::plan::Plan;

/// The models `/generate-image` offers, by their names on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum ImageModel {
    /// OpenAI's GPT Image (OpenAI Images API).
    GptImage2,
    /// Google's Gemini 2.5 Flash Image (Gemini API, generateContent).
    NanoBanana,
    /// Google's Imagen 4 Fast (Gemini API, predict).
    Imagen4Fast,
    /// ByteDance's Seedream 4.0 (BytePlus ModelArk).
    Seedream4,
    /// Black Forest Labs' FLUX.2 [pro] (BFL API, polled).
    Flux2Pro,
    /// FLUX.1 Krea [dev] on fal (fal's queue, polled).
    FluxKreaDev,
    /// Google's Gemini 3 Pro Image (Gemini API, generateContent); Pro plan only.
    NanoBananaPro,
}

impl ImageModel {
    pub const ALL: &[ImageModel] = &[
        ImageModel::GptImage2,
        ImageModel::NanoBanana,
        ImageModel::Imagen4Fast,
        ImageModel::Seedream4,
        ImageModel::Flux2Pro,
        ImageModel::FluxKreaDev,
        ImageModel::NanoBananaPro,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ImageModel::GptImage2 => "gptImage2",
            ImageModel::NanoBanana => "nanoBanana",
            ImageModel::Imagen4Fast => "imagen4Fast",
            ImageModel::Seedream4 => "seedream4",
            ImageModel::Flux2Pro => "flux2Pro",
            ImageModel::FluxKreaDev => "fluxKreaDev",
            ImageModel::NanoBananaPro => "nanoBananaPro",
        }
    }

    pub fn parse(s: &str) -> Option<ImageModel> {
        ImageModel::ALL.iter().copied().find(|m| m.as_str() == s)
    }

    /// Whether the model takes a `quality` (only GPT Image does).
    pub fn has_quality(self) -> bool {
        self == ImageModel::GptImage2
    }

    /// Whether the model draws at `ratio`: GPT Image only at 1:1, 3:2 and 2:3 (as the spec
    /// says), and Imagen 4 Fast not at 3:2 or 2:3 (Google's API has no such ratio).
    pub fn takes(self, ratio: AspectRatio) -> bool {
        match self {
            ImageModel::GptImage2 => matches!(
                ratio,
                AspectRatio::Square | AspectRatio::Landscape3x2 | AspectRatio::Portrait2x3
            ),
            ImageModel::Imagen4Fast => !matches!(ratio, AspectRatio::Landscape3x2 | AspectRatio::Portrait2x3),
            _ => true,
        }
    }

    /// The ratios the model draws at, in words for a refusal.
    pub fn ratios(self) -> String {
        let taken: Vec<&str> = AspectRatio::ALL
            .iter()
            .filter(|r| self.takes(**r))
            .map(|r| r.as_str())
            .collect();
        taken.join(", ")
    }

    /// Whether asking for this model at `quality` needs the Pro plan: `nanoBananaPro`, and
    /// `gptImage2` at medium or high.
    pub fn pro_only(self, quality: Option<Quality>) -> bool {
        match self {
            ImageModel::NanoBananaPro => true,
            ImageModel::GptImage2 => matches!(quality, Some(Quality::Medium | Quality::High)),
            _ => false,
        }
    }
}

crate::column::text_column!(ImageModel, "image model");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum AspectRatio {
    #[serde(rename = "1:1")]
    Square,
    #[serde(rename = "3:2")]
    Landscape3x2,
    #[serde(rename = "2:3")]
    Portrait2x3,
    #[serde(rename = "16:9")]
    Landscape16x9,
    #[serde(rename = "9:16")]
    Portrait9x16,
    #[serde(rename = "4:3")]
    Landscape4x3,
    #[serde(rename = "3:4")]
    Portrait3x4,
}

impl AspectRatio {
    pub const ALL: &[AspectRatio] = &[
        AspectRatio::Square,
        AspectRatio::Landscape3x2,
        AspectRatio::Portrait2x3,
        AspectRatio::Landscape16x9,
        AspectRatio::Portrait9x16,
        AspectRatio::Landscape4x3,
        AspectRatio::Portrait3x4,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AspectRatio::Square => "1:1",
            AspectRatio::Landscape3x2 => "3:2",
            AspectRatio::Portrait2x3 => "2:3",
            AspectRatio::Landscape16x9 => "16:9",
            AspectRatio::Portrait9x16 => "9:16",
            AspectRatio::Landscape4x3 => "4:3",
            AspectRatio::Portrait3x4 => "3:4",
        }
    }

    pub fn parse(s: &str) -> Option<AspectRatio> {
        AspectRatio::ALL.iter().copied().find(|r| r.as_str() == s)
    }

    /// Width and height in the ratio's smallest whole numbers (16:9 is `(16, 9)`).
    pub fn sides(self) -> (u32, u32) {
        let (w, h) = self.as_str().split_once(':').expect("a ratio has a colon");
        (w.parse().expect("a number"), h.parse().expect("a number"))
    }
}

crate::column::text_column!(AspectRatio, "aspect ratio");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Quality {
    Low,
    Medium,
    High,
}

impl Quality {
    pub fn as_str(self) -> &'static str {
        match self {
            Quality::Low => "low",
            Quality::Medium => "medium",
            Quality::High => "high",
        }
    }

    pub fn parse(s: &str) -> Option<Quality> {
        [Quality::Low, Quality::Medium, Quality::High]
            .into_iter()
            .find(|q| q.as_str() == s)
    }

    /// What a model with a quality draws at when none is asked for: medium on Pro, low on the
    /// other plans.
    pub fn default_for(plan: Plan) -> Quality {
        match plan {
            Plan::Pro => Quality::Medium,
            Plan::Intro | Plan::Basic => Quality::Low,
        }
    }
}

crate::column::text_column!(Quality, "quality");

/// Where a generation stands (`/select-generations`' `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum GenerationStatus {
    Working,
    Done,
    Failed,
}

impl GenerationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            GenerationStatus::Working => "working",
            GenerationStatus::Done => "done",
            GenerationStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<GenerationStatus> {
        [
            GenerationStatus::Working,
            GenerationStatus::Done,
            GenerationStatus::Failed,
        ]
        .into_iter()
        .find(|s2| s2.as_str() == s)
    }
}

crate::column::text_column!(GenerationStatus, "generation status");

/// Images a month per plan. Generations that failed are not counted.
#[derive(Debug, Clone, Copy)]
pub struct ImageAllowance {
    pub intro: i64,
    pub basic: i64,
    pub pro: i64,
}

impl ImageAllowance {
    /// Reads `DRIVE_IMAGES_INTRO`, `DRIVE_IMAGES_BASIC` and `DRIVE_IMAGES_PRO` (defaults 20,
    /// 200 and 1,000 images a calendar month, UTC; the spec leaves the amounts to the drive).
    pub fn from_environment() -> Result<ImageAllowance, ConfigError> {
        Ok(ImageAllowance {
            intro: config::parsed_or("DRIVE_IMAGES_INTRO", 20)?,
            basic: config::parsed_or("DRIVE_IMAGES_BASIC", 200)?,
            pro: config::parsed_or("DRIVE_IMAGES_PRO", 1000)?,
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

/// How long a generation may have succeeded at its provider without an image in the drive
/// before the sweep fails it: `DRIVE_GENERATION_IMAGE_GRACE_SECONDS`, default 900 (the spec's
/// 15 minutes; tests make it short).
pub fn image_grace() -> Result<std::time::Duration, ConfigError> {
    let seconds: f64 = config::parsed_or("DRIVE_GENERATION_IMAGE_GRACE_SECONDS", 900.0)?;
    Ok(std::time::Duration::from_secs_f64(seconds.max(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_on_the_wire_are_the_spec_s() {
        for model in ImageModel::ALL {
            assert_eq!(serde_json::to_value(model).unwrap(), model.as_str());
            assert_eq!(ImageModel::parse(model.as_str()), Some(*model));
        }
        for ratio in AspectRatio::ALL {
            assert_eq!(serde_json::to_value(ratio).unwrap(), ratio.as_str());
            assert_eq!(AspectRatio::parse(ratio.as_str()), Some(*ratio));
        }
        assert_eq!(AspectRatio::Landscape16x9.sides(), (16, 9));
    }

    #[test]
    fn the_plan_rules() {
        assert!(ImageModel::NanoBananaPro.pro_only(None));
        assert!(ImageModel::GptImage2.pro_only(Some(Quality::Medium)));
        assert!(ImageModel::GptImage2.pro_only(Some(Quality::High)));
        assert!(!ImageModel::GptImage2.pro_only(Some(Quality::Low)));
        assert!(!ImageModel::Flux2Pro.pro_only(None));
        assert!(!ImageModel::GptImage2.takes(AspectRatio::Landscape16x9));
        assert!(ImageModel::GptImage2.takes(AspectRatio::Portrait2x3));
        assert!(ImageModel::Seedream4.takes(AspectRatio::Portrait9x16));
        assert_eq!(Quality::default_for(Plan::Pro), Quality::Medium);
        assert_eq!(Quality::default_for(Plan::Basic), Quality::Low);
    }
}
