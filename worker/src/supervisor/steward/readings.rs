//! The supervisor's side of a readForSearch job: the sound its process decoded is transcribed
//! by the worker's Whisper, and what it read is checked as hostile, embedded and stored.

use base64::Engine;
use drive_core::db::PgPool;
use drive_core::db::files::FileRow;
use drive_core::db::jobs::JobRow;
use drive_core::db::moments::{self, NewMoment, Said};
use drive_core::id::FileId;
use drive_core::job::JobType;

use super::{Steward, refused};
use crate::protocol::{JobError, JobResult, MAX_HEARD_SAMPLES, MAX_MOMENTS, MAX_PASSAGE, ReadMoment};

impl Steward {
    /// Stores what the job read from `file_id`, one of its inputs, after checking it as hostile
    /// ([`checked`]) and embedding each moment's text.
    pub(super) async fn store_reading(
        &self,
        file_id: FileId,
        reading: Result<Vec<ReadMoment>, String>,
    ) -> JobResult<()> {
        self.reads_for_search()?;
        if !self.inputs.iter().any(|f| f.id == file_id) {
            return Err(refused("moments of a file that is not the job's to read"));
        }
        let read = match reading {
            Ok(read) => checked(read)?,
            Err(why) => return Ok(moments::unreadable(&self.db, self.job.user_id, file_id, &why).await?),
        };
        let texts = read.iter().map(|m| m.text.clone()).collect();
        let embeddings = self.models.embed(texts).await?;
        let read: Vec<NewMoment> = read
            .into_iter()
            .zip(embeddings)
            .map(|(m, embedding)| NewMoment {
                entry_type: m.entry_type,
                text: m.text,
                at: m.at,
                until: m.until,
                page: m.page,
                embedding: drive_embed::to_bytes(&embedding),
            })
            .collect();
        Ok(moments::replace(&self.db, self.job.user_id, file_id, &read).await?)
    }

    /// Hands `samples` (base64 of 16 kHz mono little-endian `f32`s, at most
    /// [`MAX_HEARD_SAMPLES`], every one finite) to the transcription of the job's recording,
    /// which starts with the first.
    pub(super) async fn hear(&mut self, samples: &str) -> JobResult<()> {
        self.reads_for_search()?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(samples)
            .map_err(|_| refused("sound that is not base64"))?;
        let samples = samples_of(&bytes)?;
        if self.listening.is_none() {
            self.listening = Some(self.models.listen().await?);
        }
        let listening = self.listening.as_ref().ok_or_else(|| refused("no recording"))?;
        if let Err(stopped) = listening.hear(samples).await {
            // The transcription failed: its failure says why.
            return Err(self.transcript().await.err().unwrap_or(stopped));
        }
        Ok(())
    }

    /// What was said in the recording handed over since the last transcript; none for a
    /// recording without samples.
    pub(super) async fn transcript(&mut self) -> JobResult<Vec<Said>> {
        self.reads_for_search()?;
        match self.listening.take() {
            Some(listening) => listening.transcript().await,
            None => Ok(Vec::new()),
        }
    }

    fn reads_for_search(&self) -> JobResult<()> {
        match self.job.job_type {
            JobType::ReadForSearch => Ok(()),
            _ => Err(refused("a reading for a job that does not read for search")),
        }
    }
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

/// Samples from their bytes, refused unless there are whole samples, at most
/// [`MAX_HEARD_SAMPLES`], all finite.
fn samples_of(bytes: &[u8]) -> JobResult<Vec<f32>> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) || bytes.len() / 4 > MAX_HEARD_SAMPLES {
        return Err(refused("sound that is not a piece of whole samples"));
    }
    let samples: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if !samples.iter().all(|s| s.is_finite()) {
        return Err(refused("sound with samples that are not numbers"));
    }
    Ok(samples)
}

/// Moments from a job process, refused unless each is what a reading makes: at most
/// [`MAX_MOMENTS`], text of 1 to [`MAX_PASSAGE`] characters without NUL, places in range. Their
/// embeddings are the supervisor's to make.
fn checked(read: Vec<ReadMoment>) -> JobResult<Vec<ReadMoment>> {
    let refused = |what: &str| JobError::Server(format!("a job process handed moments with {what}"));
    if read.len() > MAX_MOMENTS {
        return Err(refused("too many moments"));
    }
    for m in &read {
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
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drive_core::db::moments::EntryType;

    #[test]
    fn moments_a_job_hands_over_are_checked() {
        let moment = |text: &str, at: Option<f64>, until: Option<f64>| ReadMoment {
            entry_type: EntryType::Speech,
            text: text.to_string(),
            at,
            until,
            page: None,
        };
        assert!(checked(vec![moment("said", Some(1.0), Some(2.0))]).is_ok());
        assert!(checked(vec![moment("", None, None)]).is_err());
        assert!(checked(vec![moment("nul\0", None, None)]).is_err());
        assert!(checked(vec![moment("x", Some(2.0), Some(1.0))]).is_err());
        assert!(checked(vec![moment("x", None, Some(1.0))]).is_err());
        assert!(checked(vec![moment(&"x".repeat(MAX_PASSAGE + 1), None, None)]).is_err());
        let many = (0..=MAX_MOMENTS).map(|_| moment("x", None, None)).collect();
        assert!(checked(many).is_err());
    }

    #[test]
    fn sound_a_job_hands_over_is_checked() {
        let bytes = |samples: &[f32]| samples.iter().flat_map(|s| s.to_le_bytes()).collect::<Vec<u8>>();
        assert_eq!(samples_of(&bytes(&[0.5, -0.25])).unwrap(), vec![0.5, -0.25]);
        assert!(samples_of(&[]).is_err());
        assert!(samples_of(&bytes(&[0.5])[..3]).is_err());
        assert!(samples_of(&bytes(&[0.5, f32::NAN])).is_err());
        assert!(samples_of(&bytes(&[f32::INFINITY])).is_err());
        assert!(samples_of(&bytes(&vec![0.0; MAX_HEARD_SAMPLES])).is_ok());
        assert!(samples_of(&bytes(&vec![0.0; MAX_HEARD_SAMPLES + 1])).is_err());
    }
}
