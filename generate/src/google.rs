//! Google's Gemini API, keyed by `x-goog-api-key`. Nano Banana and Nano Banana Pro draw through
//! `POST {base}/models/{model}:generateContent` with `responseModalities: ["IMAGE"]` and
//! `imageConfig.aspectRatio`, answering the picture as a part's `inlineData`; Imagen 4 Fast
//! through `POST {base}/models/{model}:predict`, answering `predictions[0].bytesBase64Encoded`.
//! A prompt refused for safety comes back as a success with no picture: `promptFeedback.
//! blockReason`, a candidate's `finishReason`, or Imagen's `raiFilteredReason` say why.

use serde_json::{Value, json};

use crate::http::{Api, decoded};
use crate::{Ask, GenerateError, Image, Provider};

const PROVIDER: &str = "Google";

pub(crate) async fn generate_content(
    api: &Api,
    provider: &Provider,
    model: &str,
    ask: &Ask<'_>,
) -> Result<Image, GenerateError> {
    let body = json!({
        "contents": [{ "parts": [{ "text": ask.prompt }] }],
        "generationConfig": {
            "responseModalities": ["IMAGE"],
            "imageConfig": { "aspectRatio": ask.aspect_ratio.as_str() },
        },
    });
    let url = format!("{}/models/{}:generateContent", provider.base, model);
    let request = api.post(&url).header("x-goog-api-key", &provider.key).json(&body);
    let answer = api.json(request, PROVIDER).await?;
    let parts = answer["candidates"][0]["content"]["parts"].as_array();
    let data = parts
        .into_iter()
        .flatten()
        .find_map(|part| part["inlineData"]["data"].as_str());
    match data {
        Some(data) => decoded(data, PROVIDER),
        None => Err(GenerateError(format!(
            "{PROVIDER} drew nothing: {}",
            why_nothing(&answer)
        ))),
    }
}

pub(crate) async fn predict(
    api: &Api,
    provider: &Provider,
    model: &str,
    ask: &Ask<'_>,
) -> Result<Image, GenerateError> {
    let body = json!({
        "instances": [{ "prompt": ask.prompt }],
        "parameters": { "sampleCount": 1, "aspectRatio": ask.aspect_ratio.as_str() },
    });
    let url = format!("{}/models/{}:predict", provider.base, model);
    let request = api.post(&url).header("x-goog-api-key", &provider.key).json(&body);
    let answer = api.json(request, PROVIDER).await?;
    let prediction = &answer["predictions"][0];
    match prediction["bytesBase64Encoded"].as_str() {
        Some(data) => decoded(data, PROVIDER),
        None => Err(GenerateError(format!(
            "{PROVIDER} drew nothing: {}",
            why_nothing(&answer)
        ))),
    }
}

/// Why an answer holds no picture, in Google's terms.
fn why_nothing(answer: &Value) -> String {
    let text = |v: &Value| v.as_str().map(str::to_string);
    text(&answer["promptFeedback"]["blockReason"])
        .map(|reason| format!("the prompt was blocked ({reason})"))
        .or_else(|| {
            text(&answer["candidates"][0]["finishReason"]).map(|reason| format!("it stopped ({reason})"))
        })
        .or_else(|| {
            text(&answer["predictions"][0]["raiFilteredReason"])
                .map(|reason| format!("it was filtered: {reason}"))
        })
        .unwrap_or_else(|| "its answer has no picture".to_string())
}
