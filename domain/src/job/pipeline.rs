//! Pipelines: a chain of jobs run as one job (`/create-file-job` with `steps`). Each step is a
//! job type with its settings and the files it takes: the job's own (`input`) or what earlier
//! steps made (`use`). A type that takes one file at a time runs once per file (fan out: stills
//! of each video); a type that takes several takes them all in one run (fan in: a zip of every
//! still). Only what the last steps make (those no later step uses) and what a `keep` step makes
//! become files; the rest stays under the job in the store until it ends.
//!
//! Every step is checked here before anything runs, with the field at fault named by its
//! place (`steps[2].use`): its settings, its name, what it uses, and whether the steps it uses
//! can make a file of a kind it takes.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use super::{JobSpec, JobType, Rates, SettingError, Settings, SettingsError, kinds_in_words, out_of_range};
use crate::file::FileKind;

/// Steps one pipeline may have.
pub const MAX_STEPS: usize = 20;

/// What `use` calls the job's own files.
const INPUT: &str = "input";

/// A step as a caller writes it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepInput {
    /// What later steps call it in `use`; default its `jobType`.
    #[schema(inline)]
    pub name: Option<StepName>,
    #[schema(schema_with = JobType::requestable_schema)]
    pub job_type: JobType,
    /// Settings by type (the `…Options` schema of its `jobType`); left out or null for the
    /// defaults.
    #[serde(default)]
    pub options: serde_json::Value,
    /// The files it takes: `input` (the job's files) and the names of earlier steps, whose
    /// outputs it takes in that order; default the step before it (`input` for the first).
    #[serde(rename = "use")]
    #[schema(rename = "use", min_items = 1, max_items = 20, inline)]
    pub uses: Option<Vec<StepName>>,
    /// Whether its outputs become files even though a later step uses them (what no later
    /// step uses always does).
    #[serde(default)]
    pub keep: bool,
}

/// A step's name: 1 to 40 letters, digits, `-` or `_`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct StepName(String);

impl TryFrom<String> for StepName {
    type Error = String;
    fn try_from(name: String) -> Result<StepName, String> {
        let fits = (1..=40).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        match fits {
            true => Ok(StepName(name)),
            false => Err(format!(
                "{name:?} is not a step's name: 1 to 40 letters, digits, - or _"
            )),
        }
    }
}

impl From<StepName> for String {
    fn from(name: StepName) -> String {
        name.0
    }
}

impl PartialSchema for StepName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[A-Za-z0-9_-]{1,40}$"))
            .into()
    }
}

impl ToSchema for StepName {}

/// Where a step's files come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The job's own files.
    Input,
    /// What the step at this index made.
    Step(usize),
}

/// A step, checked, as the job row keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub name: String,
    #[serde(flatten)]
    pub spec: JobSpec,
    /// `input` and the names of earlier steps, as the caller gave them (checked).
    #[serde(rename = "use")]
    pub uses: Vec<String>,
    pub keep: bool,
}

impl Step {
    /// Whether it runs once per file (its type takes one) rather than once on all its files.
    pub fn fans_out(&self) -> bool {
        self.spec.input_count().1 == 1
    }
}

/// A pipeline's steps, in order: the settings of a `pipeline` job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pipeline {
    pub steps: Vec<Step>,
}

impl Pipeline {
    /// Checks the steps a caller wrote, each against its type's rules and those before it.
    /// The files they take are checked later, once known ([`JobSpec::check_inputs`]).
    pub fn parse(steps: Vec<StepInput>) -> Result<JobSpec, SettingsError> {
        if steps.is_empty() || steps.len() > MAX_STEPS {
            return Err(out_of_range("steps", format!("give 1 to {MAX_STEPS} steps")));
        }
        let mut checked: Vec<Step> = Vec::with_capacity(steps.len());
        for (index, step) in steps.into_iter().enumerate() {
            let at = |field: &str| format!("steps[{index}].{field}");
            let name = step
                .name
                .map_or_else(|| step.job_type.as_str().to_string(), String::from);
            if name == INPUT {
                return Err(out_of_range(&at("name"), "input names the job's own files"));
            }
            if checked.iter().any(|earlier| earlier.name == name) {
                return Err(out_of_range(
                    &at("name"),
                    format!("two steps are named {name}: name each one"),
                ));
            }
            let spec = JobSpec::parse(step.job_type, step.options).map_err(|e| within(index, e))?;
            let uses: Vec<String> = match step.uses {
                None if index == 0 => vec![INPUT.to_string()],
                None => vec![checked[index - 1].name.clone()],
                Some(names) => {
                    check_uses(&names, &checked).map_err(|why| out_of_range(&at("use"), why))?;
                    names.into_iter().map(String::from).collect()
                }
            };
            // A reading is of a file of the drive: what was said in it, or moments for search.
            let reads_the_drive = spec.reads_speech() || spec.job_type() == JobType::ReadForSearch;
            if reads_the_drive && uses != [INPUT] {
                return Err(out_of_range(
                    &at("use"),
                    format!(
                        "{} works from what was read of the drive's own files, so it uses input only",
                        spec.job_type().as_str()
                    ),
                ));
            }
            checked.push(Step {
                name,
                spec,
                uses,
                keep: step.keep,
            });
        }
        Ok(JobSpec::Pipeline(Pipeline { steps: checked }))
    }

    /// Where the step at `index` takes its files from, in order.
    pub fn sources(&self, index: usize) -> Vec<Source> {
        self.steps[index]
            .uses
            .iter()
            .filter_map(|name| match name.as_str() {
                INPUT => Some(Source::Input),
                name => self.steps.iter().position(|s| s.name == name).map(Source::Step),
            })
            .collect()
    }

    /// Whether each step's outputs become files: a step no later step uses (the chain's end),
    /// or one marked `keep`.
    pub fn makes_files(&self) -> Vec<bool> {
        self.steps
            .iter()
            .map(|step| step.keep || !self.steps.iter().any(|s| s.uses.contains(&step.name)))
            .collect()
    }

    /// Follows the kinds of file through the chain from files of `kinds`: each step must be able
    /// to get a file of a kind it takes from what it uses.
    fn check_flow(&self, kinds: &[FileKind]) -> Result<(), SettingsError> {
        let given: Vec<FileKind> = kinds.to_vec();
        let mut made: Vec<Vec<FileKind>> = Vec::with_capacity(self.steps.len());
        for (index, step) in self.steps.iter().enumerate() {
            let mut offered: Vec<FileKind> = Vec::new();
            for source in &self.sources(index) {
                let kinds = match source {
                    Source::Input => &given,
                    Source::Step(earlier) => &made[*earlier],
                };
                for kind in kinds {
                    if !offered.contains(kind) {
                        offered.push(*kind);
                    }
                }
            }
            let taken: Vec<FileKind> = offered
                .iter()
                .copied()
                .filter(|kind| step.spec.takes_kind(*kind))
                .collect();
            if taken.is_empty() {
                let what = match offered.is_empty() {
                    true => "no files".to_string(),
                    false => kinds_in_words(&offered),
                };
                return Err(out_of_range(
                    &format!("steps[{index}].use"),
                    format!(
                        "{} takes {}, and what it uses can only be {what}",
                        step.spec.job_type().as_str(),
                        step.spec.takes_what()
                    ),
                ));
            }
            made.push(step.spec.makes(&taken));
        }
        Ok(())
    }

    /// Checks a pipeline kept to run on files not known yet (a template): it must be able to
    /// take some kind of file, and the kinds every step on `input` takes must flow through it.
    pub fn check_unbound(&self) -> Result<(), SettingsError> {
        let takes: Vec<FileKind> = FileKind::ALL
            .into_iter()
            .filter(|kind| self.on_input().all(|(_, step)| step.spec.takes_kind(*kind)))
            .collect();
        if takes.is_empty() {
            return Err(out_of_range(
                "steps",
                "no file is of a kind every step on input takes",
            ));
        }
        self.check_flow(&takes)
    }

    /// The steps that take the job's own files.
    fn on_input(&self) -> impl Iterator<Item = (usize, &Step)> {
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, step)| step.uses.iter().any(|name| name == INPUT))
    }
}

/// That `names` name `input` or steps before this one, each once.
fn check_uses(names: &[StepName], earlier: &[Step]) -> Result<(), String> {
    if names.is_empty() || names.len() > MAX_STEPS {
        return Err(format!("give 1 to {MAX_STEPS} names"));
    }
    let mut seen = HashSet::new();
    for name in names.iter().map(|n| n.0.as_str()) {
        if !seen.insert(name) {
            return Err(format!("{name} is named twice"));
        }
        if name != INPUT && !earlier.iter().any(|step| step.name == name) {
            return Err(format!("no step before this one is named {name}"));
        }
    }
    Ok(())
}

/// A step's settings error, its field named by the step's place.
fn within(index: usize, error: SettingsError) -> SettingsError {
    match error {
        SettingsError::Shape { at, error } => SettingsError::Shape {
            at: format!("steps[{index}].{at}"),
            error,
        },
        SettingsError::Range(e) => SettingsError::Range(SettingError {
            // Rules across the files name `fileIds`, which stays what it is: the job's files.
            field: match e.field.as_str() {
                "fileIds" => e.field,
                field => format!("steps[{index}].{field}"),
            },
            message: e.message,
        }),
    }
}

impl Settings for Pipeline {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        None
    }

    /// One after another over the same bytes: the steps' times add up.
    fn rates(&self) -> Rates {
        let rates: Vec<Rates> = self.steps.iter().map(|s| s.spec.settings().rates()).collect();
        Rates {
            per_file: rates.iter().map(|r| r.per_file).sum(),
            bytes_per_second: 1.0 / rates.iter().map(|r| 1.0 / r.bytes_per_second).sum::<f64>(),
        }
    }

    /// As many as every step on the job's files takes: the most the fewest, the least the
    /// most, of those that take them all at once.
    fn input_count(&self) -> (usize, usize) {
        self.on_input()
            .filter(|(_, step)| !step.fans_out())
            .map(|(_, step)| step.spec.input_count())
            .fold((1, 100), |(min, max), (a, b)| (min.max(a), max.min(b)))
    }

    fn takes(&self, kind: FileKind, name: &str) -> bool {
        self.on_input().all(|(_, step)| step.spec.takes(kind, name))
    }

    fn takes_what(&self) -> String {
        let wanted: Vec<String> = self
            .on_input()
            .map(|(_, step)| format!("{} takes {}", step.name, step.spec.takes_what()))
            .collect();
        format!("files every step on input takes ({})", wanted.join("; "))
    }

    /// The rules of each step on the job's files across them, then the kinds of file followed
    /// through the chain.
    fn check_inputs(&self, kinds: &[FileKind]) -> Result<(), SettingsError> {
        for (index, step) in self.on_input() {
            if !step.fans_out() {
                step.spec.check_inputs(kinds).map_err(|e| within(index, e))?;
            }
        }
        self.check_flow(kinds)
    }

    fn downloads(&self) -> bool {
        self.on_input().any(|(_, step)| step.spec.settings().downloads())
    }

    fn reads_speech(&self) -> bool {
        self.steps.iter().any(|step| step.spec.reads_speech())
    }
}

/// Shown nowhere (a pipeline is asked for with `steps`), but every job type's settings have a
/// schema.
impl PartialSchema for Pipeline {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::Object).into()
    }
}

impl ToSchema for Pipeline {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("PipelineOptions")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::job::Lane;

    fn pipeline(steps: serde_json::Value) -> Result<JobSpec, SettingsError> {
        Pipeline::parse(serde_json::from_value(steps).unwrap())
    }

    fn refused_at(steps: serde_json::Value, kinds: &[FileKind]) -> String {
        let error = pipeline(steps).and_then(|spec| spec.check_inputs(kinds).map(|()| spec));
        match error {
            Err(SettingsError::Range(e)) => e.field,
            Err(SettingsError::Shape { at, error }) => format!("{at}.{}", error.path()),
            Ok(spec) => panic!("not refused: {spec:?}"),
        }
    }

    #[test]
    fn a_chain_is_kept_with_its_sources_and_reads_back_from_the_row() {
        let spec = pipeline(json!([
            { "jobType": "cut", "options": { "start": 1, "end": 9 } },
            { "name": "small", "jobType": "proxy", "options": { "height": 720 } },
            { "jobType": "stills", "options": { "every": 5 }, "use": ["small"], "keep": true },
            { "jobType": "zip", "use": ["stills", "input"] },
        ]))
        .unwrap();
        let JobSpec::Pipeline(chain) = &spec else {
            panic!("{spec:?}")
        };
        let uses: Vec<_> = (0..4).map(|n| chain.sources(n)).collect();
        assert_eq!(
            uses,
            [
                vec![Source::Input],
                vec![Source::Step(0)],
                vec![Source::Step(1)],
                vec![Source::Step(2), Source::Input],
            ]
        );
        assert_eq!(chain.makes_files(), [false, false, true, true]);
        assert!(spec.check_inputs(&[FileKind::Video]).is_ok());
        let read_back = JobSpec::from_row(JobType::Pipeline, spec.options()).unwrap();
        assert_eq!(read_back, spec);
        // The row keeps the steps as the caller wrote them, defaults filled in.
        assert_eq!(spec.options()["steps"][1]["use"], json!(["cut"]));
        assert_eq!(spec.options()["steps"][1]["options"], json!({ "height": 720 }));
        assert_eq!(Lane::of(&spec, 1, false), Lane::Bulk);
    }

    #[test]
    fn a_step_that_cannot_get_a_file_of_its_kind_is_named() {
        let chain = json!([
            { "jobType": "cut" },
            { "jobType": "zip" },
            { "jobType": "proxy" },
        ]);
        assert_eq!(refused_at(chain, &[FileKind::Video]), "steps[2].use");
        // Unzip makes files of any kind: a picture step after it may get pictures.
        let fan = json!([
            { "jobType": "unzip" },
            { "jobType": "convert", "options": { "format": "jpg" } },
            { "jobType": "makePdf" },
        ]);
        let spec = pipeline(fan).unwrap();
        assert!(spec.check_inputs(&[FileKind::Archive]).is_ok());
        assert!(!spec.takes(FileKind::Image, "a.png"));
        assert!(spec.takes(FileKind::Archive, "a.zip"));
    }

    #[test]
    fn names_uses_and_settings_are_refused_by_their_place() {
        let video = &[FileKind::Video];
        assert_eq!(
            refused_at(
                json!([{ "jobType": "proxy", "options": { "height": 480 } }]),
                video
            ),
            "steps[0].options.height"
        );
        assert_eq!(
            refused_at(json!([{ "jobType": "cut", "options": { "begin": 1 } }]), video),
            "steps[0].options.begin"
        );
        assert_eq!(
            refused_at(json!([{ "jobType": "cut" }, { "jobType": "cut" }]), video),
            "steps[1].name"
        );
        assert_eq!(
            refused_at(json!([{ "jobType": "cut", "name": "input" }]), video),
            "steps[0].name"
        );
        assert_eq!(
            refused_at(
                json!([{ "jobType": "cut", "use": ["later"] }, { "name": "later", "jobType": "proxy" }]),
                video
            ),
            "steps[0].use"
        );
        assert_eq!(
            refused_at(json!([{ "jobType": "cut", "use": ["input", "input"] }]), video),
            "steps[0].use"
        );
        assert_eq!(
            refused_at(json!([{ "jobType": "cut" }, { "jobType": "captions" }]), video),
            "steps[1].use"
        );
        assert_eq!(
            refused_at(json!([{ "jobType": "readMetadata" }]), video),
            "steps[0].jobType"
        );
        assert_eq!(refused_at(json!([]), video), "steps");
        assert!(serde_json::from_value::<StepInput>(json!({ "jobType": "cut", "name": "a b" })).is_err());
        // A rule across the job's files stays the files' own.
        assert_eq!(
            refused_at(
                json!([{ "jobType": "join" }]),
                &[FileKind::Video, FileKind::Audio]
            ),
            "fileIds"
        );
    }

    #[test]
    fn a_chain_kept_for_later_files_is_checked_by_the_kinds_it_could_take() {
        let unbound = |steps| match pipeline(steps).unwrap() {
            JobSpec::Pipeline(chain) => chain.check_unbound(),
            other => panic!("{other:?}"),
        };
        let bad = unbound(json!([{ "jobType": "cut" }, { "jobType": "zip" }, { "jobType": "proxy" }]));
        assert!(matches!(bad, Err(SettingsError::Range(e)) if e.field == "steps[2].use"));
        // Rules across the files wait for the files: a join of videos or of audio is fine.
        assert!(unbound(json!([{ "jobType": "join" }, { "jobType": "loudness" }])).is_ok());
        let none = unbound(json!([{ "jobType": "unzip" }, { "jobType": "proxy", "use": ["input"] }]));
        assert!(matches!(none, Err(SettingsError::Range(e)) if e.field == "steps"));
    }

    #[test]
    fn a_chain_takes_what_every_step_on_input_takes() {
        let spec = pipeline(json!([
            { "jobType": "join", "options": { "format": "mp3" } },
            { "jobType": "loudness", "use": ["join", "input"] },
        ]))
        .unwrap();
        assert_eq!(spec.input_count(), (2, 50));
        assert!(spec.takes(FileKind::Audio, "a.wav"));
        assert!(!spec.takes(FileKind::Image, "a.png"));
        let one = JobSpec::parse(JobType::Loudness, json!({})).unwrap();
        assert!(spec.estimate_seconds(2, 10_000_000) > one.estimate_seconds(2, 10_000_000));
    }
}
