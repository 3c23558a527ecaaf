//! Black Forest Labs, FLUX.2 [pro]: `POST {base}/flux-2-pro` with `x-key`, width and height (no
//! ratio field: about a megapixel at the asked ratio, multiples of 32), PNG out. It answers a
//! task (`id`, `polling_url`, regional: asked exactly as given); `GET polling_url` answers its
//! `status` — `Pending` until `Ready` with `result.sample`, a signed link valid about ten
//! minutes, or `Request Moderated`, `Content Moderated`, `Error`, `Task not found`.

use serde_json::json;

use crate::http::Api;
use crate::{Ask, GenerateError, Image, Provider, Task, dimensions};

const PROVIDER: &str = "Black Forest Labs";

pub(crate) async fn submit(api: &Api, provider: &Provider, ask: &Ask<'_>) -> Result<Task, GenerateError> {
    let (width, height) = dimensions(ask.aspect_ratio, 1024.0 * 1024.0, 32);
    let body = json!({
        "prompt": ask.prompt,
        "width": width,
        "height": height,
        "output_format": "png",
    });
    let request = api
        .post(&format!("{}/flux-2-pro", provider.base))
        .header("x-key", &provider.key)
        .json(&body);
    let answer = api.json(request, PROVIDER).await?;
    let polling_url = answer["polling_url"]
        .as_str()
        .ok_or_else(|| GenerateError(format!("{PROVIDER}: its answer has no polling_url")))?;
    provider.owns(polling_url, PROVIDER)?;
    Ok(Task::Bfl {
        polling_url: polling_url.to_string(),
    })
}

pub(crate) async fn poll(
    api: &Api,
    provider: &Provider,
    polling_url: &str,
) -> Result<Option<Image>, GenerateError> {
    provider.owns(polling_url, PROVIDER)?;
    let request = api.get(polling_url).header("x-key", &provider.key);
    let answer = api.json(request, PROVIDER).await?;
    let status = answer["status"].as_str().unwrap_or("");
    match status {
        "Pending" => Ok(None),
        "Ready" => {
            let link = answer["result"]["sample"]
                .as_str()
                .ok_or_else(|| GenerateError(format!("{PROVIDER}: a ready task without result.sample")))?;
            api.download(link, PROVIDER).await.map(Some)
        }
        "Request Moderated" => Err(GenerateError(format!(
            "{PROVIDER} refused the prompt (Request Moderated)"
        ))),
        "Content Moderated" => Err(GenerateError(format!(
            "{PROVIDER} withheld the image it drew (Content Moderated)"
        ))),
        other => Err(GenerateError(format!(
            "{PROVIDER} failed the task ({})",
            if other.is_empty() { "no status" } else { other }
        ))),
    }
}
