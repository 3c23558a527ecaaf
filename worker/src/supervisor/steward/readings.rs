//! The supervisor's side of a readForSearch job: what its process read is checked as hostile
//! and stored.

use drive_core::db::PgPool;
use drive_core::db::files::FileRow;
use drive_core::db::jobs::JobRow;
use drive_core::db::moments::{self, NewMoment, Said};
use drive_core::id::FileId;
use drive_core::job::JobType;

use crate::protocol::{JobError, JobResult, MAX_MOMENTS, MAX_PASSAGE, ReadMoment};

/// The supervisor's side: stores what a readForSearch job read from `file_id`, one of its
/// inputs, after checking it as hostile ([`checked`]).
pub async fn store(
    db: &PgPool,
    job: &JobRow,
    inputs: &[FileRow],
    file_id: FileId,
    reading: Result<Vec<ReadMoment>, String>,
) -> JobResult<()> {
    if job.job_type != JobType::ReadForSearch || !inputs.iter().any(|f| f.id == file_id) {
        return Err(JobError::Server(
            "a job process stored moments that are not its job's to store".into(),
        ));
    }
    match reading {
        Ok(read) => moments::replace(db, job.user_id, file_id, &checked(read)?).await?,
        Err(why) => moments::unreadable(db, job.user_id, file_id, &why).await?,
    }
    Ok(())
}

/// What is said in `file_id`, for a job that works from it (captions) and has it as an input.
pub async fn said(db: &PgPool, job: &JobRow, inputs: &[FileRow], file_id: FileId) -> JobResult<Vec<Said>> {
    let reads_speech = job.spec().is_ok_and(|spec| spec.reads_speech());
    if !reads_speech || !inputs.iter().any(|f| f.id == file_id) {
        return Err(JobError::Server(
            "a job process asked for what is said in a file that is not its job's to read".into(),
        ));
    }
    Ok(moments::said(db, file_id, None, None).await?)
}

/// Moments from a job process, refused unless each is what a reading makes: at most
/// [`MAX_MOMENTS`], text of 1 to [`MAX_PASSAGE`] characters without NUL, places in range, and an
/// embedding of the model's length made of finite numbers.
fn checked(read: Vec<ReadMoment>) -> JobResult<Vec<NewMoment>> {
    let refused = |what: &str| JobError::Server(format!("a job process handed moments with {what}"));
    if read.len() > MAX_MOMENTS {
        return Err(refused("too many moments"));
    }
    read.into_iter()
        .map(|m| {
            let chars = m.text.chars().count();
            if chars == 0 || chars > MAX_PASSAGE || m.text.contains('\0') {
                return Err(refused("a text of the wrong length"));
            }
            let place_ok = m.at.is_none_or(|at| at.is_finite() && at >= 0.0)
                && m.until
                    .is_none_or(|until| until.is_finite() && m.at.is_some_and(|at| until >= at))
                && m.page.is_none_or(|page| page >= 1);
            if !place_ok {
                return Err(refused("a place out of range"));
            }
            if m.embedding.len() != drive_embed::DIMENSIONS || !m.embedding.iter().all(|x| x.is_finite()) {
                return Err(refused("an embedding that is not the model's"));
            }
            Ok(NewMoment {
                entry_type: m.entry_type,
                text: m.text,
                at: m.at,
                until: m.until,
                page: m.page,
                embedding: drive_embed::to_bytes(&m.embedding),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use drive_core::db::moments::EntryType;

    #[test]
    fn moments_a_job_hands_over_are_checked() {
        let moment = |text: &str, at: Option<f64>, until: Option<f64>, dims: usize| ReadMoment {
            entry_type: EntryType::Speech,
            text: text.to_string(),
            at,
            until,
            page: None,
            embedding: vec![0.05; dims],
        };
        assert!(checked(vec![moment("said", Some(1.0), Some(2.0), 384)]).is_ok());
        assert!(checked(vec![moment("", None, None, 384)]).is_err());
        assert!(checked(vec![moment("nul\0", None, None, 384)]).is_err());
        assert!(checked(vec![moment("x", Some(2.0), Some(1.0), 384)]).is_err());
        assert!(checked(vec![moment("x", None, Some(1.0), 384)]).is_err());
        assert!(checked(vec![moment("x", None, None, 12)]).is_err());
        let many = (0..=MAX_MOMENTS).map(|_| moment("x", None, None, 384)).collect();
        assert!(checked(many).is_err());
    }
}
