//! `drive import URL`: the drive fetches a link into your drive (an `import` job).

use anyhow::Result;
use drive_client::organize::Import;

use crate::output;
use drive_client::Client;

pub async fn run(client: &Client, import: &Import, json: bool) -> Result<()> {
    let answer = client.import(import).await?;
    if json {
        return output::print_json(&answer);
    }
    println!(
        "job {} queued: the drive fetches {}; the file lands in {} when it is done",
        answer.queued()?.id,
        import.url,
        import.folder.as_deref().unwrap_or("/")
    );
    Ok(())
}
