//! BytePlus ModelArk, Seedream 4.0: `POST {base}/images/generations` with a bearer key, the
//! model (`seedream-4-0-250828` by default), a `WxH` size from BytePlus's recommended 2K sizes, one image,
//! no watermark, answered in base64 (`data[0].b64_json`). A refusal is an OpenAI-like
//! `{ error: { code, message } }` (such as `InputTextSensitiveContentDetected`).

use drive_domain::generation::AspectRatio;
use serde_json::json;

use crate::http::{Api, decoded};
use crate::{Ask, GenerateError, Image, Provider};

const PROVIDER: &str = "BytePlus ModelArk";

/// BytePlus's recommended 2K sizes, by ratio.
fn size(ratio: AspectRatio) -> &'static str {
    match ratio {
        AspectRatio::Square => "2048x2048",
        AspectRatio::Landscape3x2 => "2496x1664",
        AspectRatio::Portrait2x3 => "1664x2496",
        AspectRatio::Landscape16x9 => "2560x1440",
        AspectRatio::Portrait9x16 => "1440x2560",
        AspectRatio::Landscape4x3 => "2304x1728",
        AspectRatio::Portrait3x4 => "1728x2304",
    }
}

pub(crate) async fn generate(
    api: &Api,
    provider: &Provider,
    model: &str,
    ask: &Ask<'_>,
) -> Result<Image, GenerateError> {
    let body = json!({
        "model": model,
        "prompt": ask.prompt,
        "size": size(ask.aspect_ratio),
        "sequential_image_generation": "disabled",
        "response_format": "b64_json",
        "watermark": false,
    });
    let request = api
        .post(&format!("{}/images/generations", provider.base))
        .bearer_auth(&provider.key)
        .json(&body);
    let answer = api.json(request, PROVIDER).await?;
    let item = &answer["data"][0];
    if let Some(data) = item["b64_json"].as_str() {
        return decoded(data, PROVIDER);
    }
    let why = item["error"]["message"]
        .as_str()
        .or(answer["error"]["message"].as_str())
        .unwrap_or("its answer has no data[0].b64_json");
    Err(GenerateError(format!("{PROVIDER} drew nothing: {why}")))
}
