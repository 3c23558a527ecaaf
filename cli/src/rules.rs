//! `drive rules`: folder rules from the command line — add (with `--backfill MINUTES` for the
//! files already there, or `--dry-run` for its estimate), list, pause, resume, remove.

use anyhow::Result;
use drive_client::Client;
use drive_client::rules::{BackfillBudget, MadeRule, NewRule, Rule};
use uuid::Uuid;

use crate::jobs;
use crate::output;

pub struct Asked<'a> {
    pub folder: &'a str,
    pub job_type: Option<&'a str>,
    pub settings: &'a [String],
    pub options: Option<&'a str>,
    pub steps: Option<&'a std::path::Path>,
    pub template: Option<Uuid>,
    pub results_folder: Option<Uuid>,
    pub backfill: Option<u32>,
    pub dry_run: bool,
}

/// `drive rules add`.
pub async fn add(client: &Client, asked: Asked<'_>, json: bool) -> Result<()> {
    let rule = NewRule {
        folder: asked.folder.to_string(),
        job_type: asked.job_type.map(str::to_string),
        options: match asked.job_type {
            Some(_) => Some(jobs::options(asked.options, asked.settings)?),
            None => None,
        },
        steps: asked.steps.map(jobs::steps).transpose()?,
        template_id: asked.template,
        result_folder_id: asked.results_folder,
        backfill: asked
            .backfill
            .map(|budget_minutes| BackfillBudget { budget_minutes }),
        dry_run: asked.dry_run,
    };
    let made = client.create_rule(&rule).await?;
    if json {
        return output::print_json(&made);
    }
    show_made(&made);
    Ok(())
}

fn show_made(made: &MadeRule) {
    if let Some(rule) = &made.rule {
        println!("rule {}", line(rule));
    }
    if let Some(backfill) = &made.backfill {
        match backfill.files_taken {
            Some(taken) => println!(
                "backfill: {taken} of {} files already there taken (about {} s of jobs)",
                backfill.files, backfill.estimate_seconds
            ),
            None => println!(
                "dry run: {} files already there, about {} s of jobs; nothing was made",
                backfill.files, backfill.estimate_seconds
            ),
        }
    }
}

fn line(rule: &Rule) -> String {
    let state = if rule.paused { "paused" } else { "on" };
    format!(
        "{}  {}  {}  {state}  {} files taken, {} waiting",
        rule.id, rule.folder.path, rule.job_type, rule.files_taken, rule.files_waiting
    )
}

/// `drive rules list`.
pub async fn list(client: &Client, json: bool) -> Result<()> {
    let rules = client.rules().await?;
    if json {
        return output::print_json(&rules);
    }
    if rules.rules.is_empty() {
        println!("No folder rules: `drive rules add /Inbox --type checksum` makes one.");
    }
    for rule in &rules.rules {
        println!("{}", line(rule));
    }
    Ok(())
}

/// `drive rules pause` and `drive rules resume`.
pub async fn pause(client: &Client, id: Uuid, paused: bool, json: bool) -> Result<()> {
    let changed = client.pause_rule(id, paused).await?;
    if json {
        return output::print_json(&changed);
    }
    println!("rule {}", line(&changed.rule));
    Ok(())
}

/// `drive rules remove`.
pub async fn remove(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let removed = client.delete_rule(id).await?;
    if json {
        return output::print_json(&removed);
    }
    println!("rule {} removed", removed.deleted);
    Ok(())
}
