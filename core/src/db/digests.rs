//! Digests checksum jobs computed, kept per file and algorithm (`file_digests`): a recorded
//! object is never written again, so a digest once computed stays true for its file.

use std::collections::HashMap;

use sqlx::PgConnection;

use crate::db::files::FileRow;
use crate::id::FileId;
use crate::job::{Checksums, DigestAlgorithm, FileDigest};

/// Keeps the digests of a checksum job that ended done. Only for the job's own inputs, and
/// only well-formed ones: the result comes from the job's process, which read uploaded bytes
/// and is trusted with nothing else.
pub async fn keep(
    conn: &mut PgConnection,
    inputs: &[FileId],
    result: &serde_json::Value,
) -> Result<(), sqlx::Error> {
    let Ok(result) = serde_json::from_value::<Checksums>(result.clone()) else {
        return Ok(());
    };
    let (files, digests): (Vec<FileId>, Vec<String>) = result
        .checksums
        .into_iter()
        .filter(|c| inputs.contains(&c.file_id) && result.algorithm.is_digest(&c.digest))
        .map(|c| (c.file_id, c.digest))
        .unzip();
    sqlx::query(
        "insert into file_digests (file_id, algorithm, digest)
         select file_id, $1, digest from unnest($2::uuid[], $3::text[]) as kept (file_id, digest)
         on conflict (file_id, algorithm) do nothing",
    )
    .bind(result.algorithm.as_str())
    .bind(&files)
    .bind(&digests)
    .execute(conn)
    .await?;
    Ok(())
}

/// A checksum job's result from the digests kept, when every one of `inputs` has one for
/// `algorithm`.
pub async fn answer(
    conn: &mut PgConnection,
    algorithm: DigestAlgorithm,
    inputs: &[FileRow],
) -> Result<Option<Checksums>, sqlx::Error> {
    let ids: Vec<FileId> = inputs.iter().map(|f| f.id).collect();
    let kept: HashMap<FileId, String> =
        sqlx::query_as("select file_id, digest from file_digests where algorithm = $1 and file_id = any($2)")
            .bind(algorithm.as_str())
            .bind(&ids)
            .fetch_all(conn)
            .await?
            .into_iter()
            .collect();
    let checksums: Option<Vec<FileDigest>> = inputs
        .iter()
        .map(|f| {
            kept.get(&f.id).map(|digest| FileDigest {
                file_id: f.id,
                file_name: f.file_name.clone(),
                bytes: f.file_size,
                digest: digest.clone(),
            })
        })
        .collect();
    Ok(checksums.map(|checksums| Checksums { algorithm, checksums }))
}
