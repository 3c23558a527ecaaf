//! A pipeline runs as one job: its steps in order, each run of a step in a job process of its
//! own, supervised like any job's (heartbeat, stop, time, disk, minutes, drain). A step takes
//! the files of the steps it uses that are of a kind it takes: all at once, or one run per file
//! when its type takes one. What a run makes is recorded with the run as it is made, so a job
//! taken up again (its worker died, or `/retry-file-job`) skips the runs done and the results
//! recorded, and runs again only what it still needs.

use std::collections::HashSet;

use anyhow::Result;
use drive_core::db::files::FileRow;
use drive_core::db::jobs::runs::{self, RunAt, RunRow};
use drive_core::db::jobs::{End, JobRow, JobState};
use drive_core::job::{Pipeline, Source, Step, decimal_size};
use serde_json::json;

use super::{Farm, Supervised};
use crate::supervisor::steward::{Place, Steward};

impl Farm {
    pub(super) async fn run_pipeline(&self, job: JobRow, chain: Pipeline) -> Result<()> {
        let db = &self.shared.db;
        tracing::info!(job.id = %job.id, steps = chain.steps.len(), attempt = job.attempts, "running a pipeline");
        let inputs = match self.beating(&[job.id], Steward::inputs_of(db, &job)).await? {
            Ok(files) => files,
            Err(why) => return self.shared.end(job.id, End::Failed(why)).await,
        };
        let files = chain.makes_files();
        let mut ran = runs::of_job(db, job.id).await?;
        let needed = needed(&chain, &files, &ran, &removed_steps(self, &job).await?);
        let steps = chain.steps.len();
        let mut made: Vec<Vec<FileRow>> = Vec::with_capacity(steps);
        let mut downloads = 0;
        let mut results = serde_json::Map::new();
        for (index, step) in chain.steps.iter().enumerate() {
            if !needed[index] {
                // Done before, its outputs at hand; or nothing that still runs takes them.
                let outputs = match is_complete(&ran, index) {
                    true => runs::outputs_of_step(db, job.id, index as i32).await?,
                    false => Vec::new(),
                };
                made.push(outputs.into_iter().map(|o| o.file).collect());
                if files[index] {
                    results.insert(step.name.clone(), answers(&ran, index));
                }
                continue;
            }
            if is_complete(&ran, index) {
                // Done once, but its intermediates went with the job's end: made again.
                runs::forget_step(db, job.id, index as i32).await?;
            }
            let batches = match batches(&chain, index, &inputs, &made) {
                Ok(batches) => batches,
                Err(why) => return self.fail(&job, step, why).await,
            };
            downloads += batches
                .iter()
                .flatten()
                .filter(|f| step.spec.downloads(f.kind))
                .map(|f| f.file_size)
                .sum::<i64>();
            if downloads > self.shared.settings.download_limit {
                let why = format!(
                    "its steps would download more than {} of pictures and PDFs, the most a job may",
                    decimal_size(self.shared.settings.download_limit)
                );
                return self.shared.end(job.id, End::Failed(why)).await;
            }
            runs::plan(db, job.id, index as i32, batches.len() as i32).await?;
            ran = runs::of_job(db, job.id).await?;
            for (run, batch) in batches.into_iter().enumerate() {
                let at = RunAt {
                    job_id: job.id,
                    step: index as i32,
                    run: run as i32,
                };
                let Some(row) = ran.iter().find(|r| r.step == at.step && r.run == at.run) else {
                    anyhow::bail!("the run {run} of step {index} was not written");
                };
                if row.state == JobState::Done {
                    continue;
                }
                runs::start(db, at).await?;
                let of_step = ran.iter().filter(|r| r.step == at.step).count() as f32;
                let place = Place::Run {
                    at,
                    files: files[index],
                    done: (index as f32 + run as f32 / of_step) / steps as f32,
                    share: 1.0 / (steps as f32 * of_step),
                };
                // The job process sees one job of the step's type on the run's files.
                let seen = JobRow {
                    job_type: step.spec.job_type(),
                    options: step.spec.options(),
                    input_ids: batch.iter().map(|f| f.id).collect(),
                    output_folder_id: row.output_folder_id,
                    ..job.clone()
                };
                tracing::info!(job.id = %job.id, step = index, run, job.r#type = seen.job_type.as_str(), "running a step");
                let (steward, start) = self
                    .beating(&[job.id], Steward::prepare(&self.shared, seen, Ok(batch), place))
                    .await?;
                let Supervised::Exited(status) = self.supervise(&job, steward, start).await? else {
                    return Ok(());
                };
                ran = runs::of_job(db, job.id).await?;
                match ran.iter().find(|r| r.step == at.step && r.run == at.run) {
                    Some(row) if row.state == JobState::Done => {}
                    Some(RunRow {
                        state: JobState::Failed,
                        error,
                        ..
                    }) => {
                        let why = error.clone().unwrap_or_else(|| "it failed".to_string());
                        return self.fail(&job, step, why).await;
                    }
                    // Exited without ending its run: tried again, or failed, as any job.
                    _ => return self.after_exit(job.id, status).await,
                }
            }
            let outputs = runs::outputs_of_step(db, job.id, index as i32).await?;
            made.push(outputs.into_iter().map(|o| o.file).collect());
            if files[index] {
                results.insert(step.name.clone(), answers(&ran, index));
            }
        }
        // What each step whose outputs are files answered, run by run.
        self.shared
            .end(job.id, End::Done(json!({ "steps": results })))
            .await
    }

    /// Fails the pipeline at `step`, saying which.
    async fn fail(&self, job: &JobRow, step: &Step, why: String) -> Result<()> {
        let why = format!("step {} ({}): {why}", step.name, step.spec.job_type().as_str());
        self.shared.end(job.id, End::Failed(why)).await
    }
}

/// The steps whose intermediates were removed (the job ended once already).
async fn removed_steps(farm: &Farm, job: &JobRow) -> Result<HashSet<usize>> {
    let mut conn = farm.shared.db.acquire().await?;
    Ok(runs::outputs(&mut conn, &[job.id])
        .await?
        .into_iter()
        .filter(|o| o.removed)
        .map(|o| o.step as usize)
        .collect())
}

/// What step `index`'s runs answered, in order.
fn answers(ran: &[RunRow], index: usize) -> serde_json::Value {
    ran.iter()
        .filter(|r| r.step as usize == index)
        .map(|r| r.result.clone().unwrap_or_default())
        .collect()
}

/// Whether every run of step `index` is done (and it has runs).
fn is_complete(ran: &[RunRow], index: usize) -> bool {
    let mut mine = ran.iter().filter(|r| r.step as usize == index).peekable();
    mine.peek().is_some() && mine.all(|r| r.state == JobState::Done)
}

/// Which steps must run: those whose outputs are files and are not done, and those a step that
/// must run uses whose outputs are not at hand (not done, or removed).
fn needed(chain: &Pipeline, files: &[bool], ran: &[RunRow], removed: &HashSet<usize>) -> Vec<bool> {
    let steps = chain.steps.len();
    let mut needed = vec![false; steps];
    for index in (0..steps).rev() {
        let at_hand = is_complete(ran, index) && !removed.contains(&index);
        let used = (index + 1..steps)
            .any(|later| needed[later] && chain.sources(later).contains(&Source::Step(index)));
        needed[index] = match files[index] {
            true => !is_complete(ran, index),
            false => used && !at_hand,
        };
    }
    needed
}

/// The files of each run of step `index`: those of what it uses that are of a kind it takes,
/// all in one run, or one run each when its type takes one file.
fn batches(
    chain: &Pipeline,
    index: usize,
    inputs: &[FileRow],
    made: &[Vec<FileRow>],
) -> Result<Vec<Vec<FileRow>>, String> {
    let step = &chain.steps[index];
    let taken: Vec<FileRow> = chain
        .sources(index)
        .into_iter()
        .flat_map(|source| match source {
            Source::Input => inputs.to_vec(),
            Source::Step(earlier) => made[earlier].clone(),
        })
        .filter(|file| step.spec.takes(file.kind, &file.file_name))
        .collect();
    let (min, max) = step.spec.input_count();
    if taken.is_empty() {
        return Err(format!(
            "what it uses holds none of the files it takes ({})",
            step.spec.takes_what()
        ));
    }
    if step.fans_out() {
        return Ok(taken.into_iter().map(|file| vec![file]).collect());
    }
    if taken.len() < min || taken.len() > max {
        return Err(format!(
            "it takes {min} to {max} files, and what it uses holds {} it takes",
            taken.len()
        ));
    }
    Ok(vec![taken])
}

#[cfg(test)]
mod tests {
    use super::*;
    use drive_core::job::{JobSpec, StepInput};

    fn chain(steps: serde_json::Value) -> Pipeline {
        let steps: Vec<StepInput> = serde_json::from_value(steps).unwrap();
        match Pipeline::parse(steps).unwrap() {
            JobSpec::Pipeline(chain) => chain,
            other => panic!("{other:?}"),
        }
    }

    fn run(step: i32, state: JobState) -> RunRow {
        RunRow {
            step,
            run: 0,
            state,
            output_folder_id: None,
            result: None,
            error: None,
        }
    }

    #[test]
    fn a_chain_taken_up_again_runs_only_what_it_still_needs() {
        let chain = chain(json!([
            { "jobType": "cut" },
            { "jobType": "proxy", "keep": true },
            { "jobType": "stills", "options": { "every": 5 } },
            { "jobType": "zip" },
        ]));
        let files = chain.makes_files();
        assert_eq!(files, [false, true, false, true]);
        let none = HashSet::new();
        assert_eq!(needed(&chain, &files, &[], &none), [true, true, true, true]);
        // Cut and proxy done, stills under way: cut's outputs are not needed again.
        let ran = [
            run(0, JobState::Done),
            run(1, JobState::Done),
            run(2, JobState::Running),
        ];
        assert_eq!(needed(&chain, &files, &ran, &none), [false, false, true, true]);
        // Tried again after an end that removed the in-between files: stills is made again
        // from proxy's kept files, cut is not.
        let ran = [
            run(0, JobState::Done),
            run(1, JobState::Done),
            run(2, JobState::Done),
        ];
        let removed = HashSet::from([0, 2]);
        assert_eq!(needed(&chain, &files, &ran, &removed), [false, false, true, true]);
    }
}
