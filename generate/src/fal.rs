//! fal's queue, FLUX.1 Krea [dev]: `POST {base}/fal-ai/flux/krea` with `Authorization: Key …`,
//! an `image_size` of width and height (about a megapixel at the asked ratio), one PNG. It
//! answers `status_url` and `response_url` (used as given: they are not the submitted path);
//! `GET status_url` answers `IN_QUEUE` or `IN_PROGRESS` (202) until `COMPLETED` (200), and
//! then `GET response_url` answers `images[0].url`, or the model's error (a failed run also
//! ends `COMPLETED`). An image the safety checker flagged (`has_nsfw_concepts`) is not kept.

use serde_json::json;

use crate::http::Api;
use crate::{Ask, GenerateError, Image, Provider, Task, dimensions};

const PROVIDER: &str = "fal";

fn key(provider: &Provider) -> String {
    format!("Key {}", provider.key)
}

pub(crate) async fn submit(api: &Api, provider: &Provider, ask: &Ask<'_>) -> Result<Task, GenerateError> {
    let (width, height) = dimensions(ask.aspect_ratio, 1024.0 * 1024.0, 16);
    let body = json!({
        "prompt": ask.prompt,
        "image_size": { "width": width, "height": height },
        "num_images": 1,
        "output_format": "png",
    });
    let request = api
        .post(&format!("{}/fal-ai/flux/krea", provider.base))
        .header("Authorization", key(provider))
        .json(&body);
    let answer = api.json(request, PROVIDER).await?;
    let (Some(status_url), Some(response_url)) =
        (answer["status_url"].as_str(), answer["response_url"].as_str())
    else {
        return Err(GenerateError(format!(
            "{PROVIDER}: its answer has no status_url and response_url"
        )));
    };
    provider.owns(status_url, PROVIDER)?;
    provider.owns(response_url, PROVIDER)?;
    Ok(Task::Fal {
        status_url: status_url.to_string(),
        response_url: response_url.to_string(),
    })
}

pub(crate) async fn poll(
    api: &Api,
    provider: &Provider,
    status_url: &str,
    response_url: &str,
) -> Result<Option<Image>, GenerateError> {
    provider.owns(status_url, PROVIDER)?;
    provider.owns(response_url, PROVIDER)?;
    let request = api.get(status_url).header("Authorization", key(provider));
    let status = api.json(request, PROVIDER).await?;
    match status["status"].as_str() {
        Some("IN_QUEUE" | "IN_PROGRESS") => return Ok(None),
        Some("COMPLETED") => {}
        other => {
            return Err(GenerateError(format!(
                "{PROVIDER}: unknown status {}",
                other.unwrap_or("(none)")
            )));
        }
    }
    let request = api.get(response_url).header("Authorization", key(provider));
    let result = api.json(request, PROVIDER).await?;
    if result["has_nsfw_concepts"][0].as_bool() == Some(true) {
        return Err(GenerateError(format!(
            "{PROVIDER}'s safety checker flagged the image"
        )));
    }
    let link = result["images"][0]["url"]
        .as_str()
        .ok_or_else(|| GenerateError(format!("{PROVIDER}: the result has no images[0].url")))?;
    api.download(link, PROVIDER).await.map(Some)
}
