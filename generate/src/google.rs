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
    let answer = call(api, provider, model, "generateContent", &body).await?;
    let parts = answer["candidates"][0]["content"]["parts"].as_array();
    let data = parts
        .into_iter()
        .flatten()
        .find_map(|part| part["inlineData"]["data"].as_str());
    match data {
        Some(data) => decoded(data, PROVIDER),
        None => Err(drew_nothing(&answer)),
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
    let answer = call(api, provider, model, "predict", &body).await?;
    let prediction = &answer["predictions"][0];
    match prediction["bytesBase64Encoded"].as_str() {
        Some(data) => decoded(data, PROVIDER),
        None => Err(drew_nothing(&answer)),
    }
}

/// POSTs `body` to `{base}/models/{model}:{method}` and reads the JSON answer.
async fn call(
    api: &Api,
    provider: &Provider,
    model: &str,
    method: &str,
    body: &Value,
) -> Result<Value, GenerateError> {
    let url = format!("{}/models/{model}:{method}", provider.base);
    let request = api.post(&url).header("x-goog-api-key", &provider.key).json(body);
    api.json(request, PROVIDER).await
}

/// The error of an answer that holds no picture, saying why in Google's terms.
fn drew_nothing(answer: &Value) -> GenerateError {
    let text = |v: &Value| v.as_str().map(str::to_string);
    let why = text(&answer["promptFeedback"]["blockReason"])
        .map(|reason| format!("the prompt was blocked ({reason})"))
        .or_else(|| {
            text(&answer["candidates"][0]["finishReason"]).map(|reason| format!("it stopped ({reason})"))
        })
        .or_else(|| {
            text(&answer["predictions"][0]["raiFilteredReason"])
                .map(|reason| format!("it was filtered: {reason}"))
        })
        .unwrap_or_else(|| "its answer has no picture".to_string());
    GenerateError(format!("{PROVIDER} drew nothing: {why}"))
}
