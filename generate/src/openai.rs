//! OpenAI Images: `POST {base}/images/generations` with a bearer key; GPT Image models answer
//! the picture in base64 (`data[0].b64_json`). Sizes: 1024x1024, 1536x1024 and 1024x1536,
//! the three ratios `gptImage2` takes.

use drive_domain::generation::{AspectRatio, Quality};
use serde_json::json;

use crate::http::{Api, decoded};
use crate::{Ask, GenerateError, Image, Provider};

const PROVIDER: &str = "OpenAI";

pub(crate) async fn generate(
    api: &Api,
    provider: &Provider,
    model: &str,
    ask: &Ask<'_>,
) -> Result<Image, GenerateError> {
    let size = match ask.aspect_ratio {
        AspectRatio::Landscape3x2 => "1536x1024",
        AspectRatio::Portrait2x3 => "1024x1536",
        _ => "1024x1024",
    };
    let body = json!({
        "model": model,
        "prompt": ask.prompt,
        "n": 1,
        "size": size,
        "quality": ask.quality.unwrap_or(Quality::Low).as_str(),
        "output_format": "png",
    });
    let request = api
        .post(&format!("{}/images/generations", provider.base))
        .bearer_auth(&provider.key)
        .json(&body);
    let answer = api.json(request, PROVIDER).await?;
    let data = answer["data"][0]["b64_json"]
        .as_str()
        .ok_or_else(|| GenerateError(format!("{PROVIDER}: its answer has no data[0].b64_json")))?;
    decoded(data, PROVIDER)
}
