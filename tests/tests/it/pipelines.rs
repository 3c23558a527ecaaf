//! Pipelines end to end: `/create-file-job` with `steps`, run by real workers on real uploads.
//! Only what the chain's last steps make (and `keep` steps) becomes files; the rest stays under
//! the job in the store and is gone once it ends. Fan out and fan in, a step refused by its
//! place, cancel mid-chain, and a worker killed mid-chain.

use std::io::Write;
use std::time::Duration;

use drive_tests::media::{ffprobe, video_of};
use drive_tests::{TestApp, TestUser, assert_done, names, raw_store};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Row;

/// The keys the store holds under job `id`'s folder.
async fn keys_under_job(app: &TestApp, user: &TestUser, id: &Value) -> Vec<String> {
    let listed = raw_store()
        .await
        .list_objects_v2()
        .bucket(&app.private_bucket)
        .prefix(format!("users/{}/jobs/{}/", user.id, id.as_str().unwrap()))
        .send()
        .await
        .unwrap();
    let mut keys: Vec<String> = listed
        .contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_string))
        .collect();
    keys.sort();
    keys
}

/// The stored keys of the files `job` made.
async fn keys_of_files(app: &TestApp, job: &Value) -> Vec<String> {
    let mut keys = Vec::new();
    for file in job["files"].as_array().unwrap() {
        keys.push(
            app.object_key(file["id"].as_str().unwrap().parse().unwrap())
                .await,
        );
    }
    keys.sort();
    keys
}

/// A test picture as PNG, `side` pixels square.
fn png(side: u32, seed: u8) -> Vec<u8> {
    drive_tests::media::ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            &format!("color=c=0x{seed:02x}4080:size={side}x{side}"),
            "-frames:v",
            "1",
        ],
        "png",
    )
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    for (name, bytes) in entries {
        zip.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    out.into_inner()
}

fn step<'a>(job: &'a Value, name: &str) -> &'a Value {
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}: {job}"))
}

/// Polls the job until `ready` holds of it (failing should it end first).
async fn wait_until(app: &TestApp, user: &TestUser, id: &Value, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let job = app.job(user, id).await;
        if ready(&job) {
            return job;
        }
        assert!(
            !["done", "failed", "stopped"].contains(&job["state"].as_str().unwrap()),
            "the job ended first: {job}"
        );
        assert!(tokio::time::Instant::now() < deadline, "never ready: {job}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_four_step_chain_keeps_only_its_final_files_and_nothing_else_in_the_store() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let talk = app
        .upload(
            &user,
            "talk.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=640x360:rate=25", 12.0, &[]),
        )
        .await;
    let chain = json!({
        "fileIds": [talk],
        "steps": [
            { "name": "cut", "jobType": "cut", "options": { "start": 1, "end": 12 } },
            { "name": "proxy", "jobType": "proxy", "options": { "height": 720 } },
            { "name": "stills", "jobType": "stills", "options": { "every": 5 } },
            { "name": "zip", "jobType": "zip", "options": { "name": "talk stills" } },
        ],
    });
    let mut dry = chain.clone();
    dry["dryRun"] = json!(true);
    let estimate = app.call(&user, "/create-file-job", Some(dry)).await;
    assert_eq!(estimate.status, StatusCode::OK, "{}", estimate.body);
    assert!(estimate.body["job"].is_null());
    assert!(estimate.body["estimateSeconds"].as_u64().unwrap() >= 1);

    let job = app.create_job(&user, chain).await;
    assert_eq!(job["jobType"], "pipeline");
    assert_eq!(job["steps"].as_array().unwrap().len(), 4, "{job}");
    assert_eq!(step(&job, "cut")["state"], "queued");
    let ended = app.wait_job(&user, &job["id"]).await;
    assert_done(&ended);
    assert_eq!(ended["progress"], 1.0);
    // Only the zip became a file, beside the video.
    assert_eq!(names(&ended), ["talk stills.zip"], "{ended}");
    let zip_id = ended["files"][0]["id"].as_str().unwrap().to_string();
    let zipped = app.download(&user, &zip_id).await;
    let archive = zip::ZipArchive::new(std::io::Cursor::new(zipped)).unwrap();
    let mut entries: Vec<String> = archive.file_names().map(|n| n.unwrap().to_string()).collect();
    entries.sort();
    // 11 seconds, a still every 5: at 0, 5 and 10.
    assert_eq!(entries.len(), 3, "{entries:?}");
    for (name, made) in [("cut", 1), ("proxy", 1), ("stills", 3), ("zip", 1)] {
        let step = step(&ended, name);
        assert_eq!(step["state"], "done", "{step}");
        assert_eq!(step["outputs"].as_array().unwrap().len(), made, "{step}");
        assert_eq!(step["makesFiles"], name == "zip", "{step}");
    }
    assert_eq!(step(&ended, "zip")["outputs"][0]["fileId"], zip_id.as_str());
    assert!(step(&ended, "proxy")["outputs"][0]["fileId"].is_null());
    // The in-between files are in no library and gone from the store; the zip's key is all
    // that stays under the job.
    let library = app.call(&user, "/select-user-files", None).await;
    let listed: Vec<&str> = library
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 2, "the video and the zip: {listed:?}");
    assert_eq!(
        keys_under_job(&app, &user, &job["id"]).await,
        keys_of_files(&app, &ended).await
    );
    // One job event, with the final files.
    let events = app
        .wait_events(&user, json!({ "kinds": ["job"], "jobId": job["id"] }), 1)
        .await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["job"]["state"], "done");
    assert_eq!(events[0]["files"][0]["id"], zip_id.as_str());
    // Its time counts once, for the whole chain.
    assert!(ended["seconds"].as_f64().unwrap() > 0.0);
}

#[tokio::test]
async fn a_step_that_fans_out_runs_once_per_file_and_a_kept_step_stays() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let first = zip_of(&[
        ("a.png", &png(64, 1)),
        ("notes.txt", b"not a picture"),
        ("b.png", &png(80, 2)),
    ]);
    let second = zip_of(&[("c.png", &png(48, 3))]);
    let first = app
        .upload(&user, "first.zip", "Archive", "application/zip", first)
        .await;
    let second = app
        .upload(&user, "second.zip", "Archive", "application/zip", second)
        .await;
    let job = app
        .create_job(
            &user,
            json!({
                "fileIds": [first, second],
                "steps": [
                    { "jobType": "unzip" },
                    { "jobType": "convert", "options": { "format": "jpg" }, "keep": true },
                    { "jobType": "makePdf", "options": { "name": "delivery" } },
                ],
            }),
        )
        .await;
    let ended = app.wait_job(&user, &job["id"]).await;
    assert_done(&ended);
    // Unzip takes one archive at a time: a run each. Convert takes what unzip made that is a
    // picture (not the note), all at once, and is kept; makePdf takes every converted picture.
    let unzip = step(&ended, "unzip");
    assert_eq!(
        (unzip["runs"].as_u64(), unzip["runsDone"].as_u64()),
        (Some(2), Some(2)),
        "{unzip}"
    );
    assert_eq!(unzip["outputs"].as_array().unwrap().len(), 4, "{unzip}");
    let convert = step(&ended, "convert");
    assert_eq!(convert["runs"], 1);
    assert_eq!(convert["outputs"].as_array().unwrap().len(), 3, "{convert}");
    let mut made = names(&ended);
    made.sort();
    assert_eq!(made, ["a.jpg", "b.jpg", "c.jpg", "delivery.pdf"], "{ended}");
    let pdf = ended["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fileName"] == "delivery.pdf")
        .unwrap();
    let bytes = app.download(&user, pdf["id"].as_str().unwrap()).await;
    let document = lopdf::Document::load_mem(&bytes).unwrap();
    assert_eq!(document.get_pages().len(), 3, "a page a picture");
    // The unzipped entries were never files: no folder was made for them, nothing of them stays.
    let mut db = app.db().await;
    let folders: i64 = sqlx::query_scalar("select count(*) from folders where user_id = $1::uuid")
        .bind(user.id.to_string())
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(folders, 0);
    assert_eq!(
        keys_under_job(&app, &user, &job["id"]).await,
        keys_of_files(&app, &ended).await
    );
}

#[tokio::test]
async fn a_chain_is_refused_by_the_step_at_fault_before_anything_runs() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let clip = app
        .upload(
            &user,
            "clip.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=160x120:rate=25", 1.0, &[]),
        )
        .await;
    let ask = |steps: Value| json!({ "fileIds": [clip], "steps": steps });
    let cases = [
        // A zip makes archives, which proxy does not take.
        (
            json!([{ "jobType": "cut" }, { "jobType": "zip" }, { "jobType": "proxy" }]),
            "steps[2].use",
        ),
        (json!([{ "jobType": "cut", "use": ["nothing"] }]), "steps[0].use"),
        (
            json!([{ "jobType": "proxy", "options": { "height": 480 } }]),
            "steps[0].options.height",
        ),
        (
            json!([{ "jobType": "cut", "options": { "begin": 1 } }]),
            "steps[0].options",
        ),
        (
            json!([{ "jobType": "cut" }, { "jobType": "cut" }]),
            "steps[1].name",
        ),
        (json!([{ "jobType": "import" }]), "steps[0].jobType"),
        (json!([]), "steps"),
    ];
    for (steps, field) in cases {
        let refused = app
            .call(&user, "/create-file-job", Some(ask(steps.clone())))
            .await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{steps}: {}",
            refused.body
        );
        assert!(
            refused.body["field"]
                .as_str()
                .unwrap_or_default()
                .starts_with(field),
            "{steps}: {}",
            refused.body
        );
    }
    let both = json!({ "fileIds": [clip], "jobType": "cut", "steps": [{ "jobType": "cut" }] });
    app.call(&user, "/create-file-job", Some(both))
        .await
        .assert_bad_field("invalid_field", "steps");
    // A picture given to a chain whose first step takes videos.
    let picture = app.upload(&user, "p.png", "Image", "image/png", png(16, 1)).await;
    let wrong = json!({ "fileIds": [picture], "steps": [{ "jobType": "cut" }] });
    app.call(&user, "/create-file-job", Some(wrong))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    let mut db = app.db().await;
    let jobs: i64 = sqlx::query_scalar("select count(*) from file_jobs where job_type = 'pipeline'")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(jobs, 0, "nothing was queued");
}

/// A chain whose first step is quick and kept, and whose second is slow (VP9 of a longer video).
fn slow_chain(clip: &drive_core::id::FileId) -> Value {
    json!({
        "fileIds": [clip],
        "steps": [
            { "name": "start", "jobType": "cut", "options": { "start": 0, "end": 20 }, "keep": true },
            { "name": "slow", "jobType": "convert", "options": { "format": "webm" } },
            { "name": "zip", "jobType": "zip", "options": { "name": "webm" } },
        ],
    })
}

#[tokio::test]
async fn a_chain_canceled_mid_way_keeps_what_was_finished() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let clip = app
        .upload(
            &user,
            "long.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=480x270:rate=25", 20.0, &[]),
        )
        .await;
    let job = app.create_job(&user, slow_chain(&clip)).await;
    let under_way = wait_until(&app, &user, &job["id"], |job| {
        step(job, "slow")["state"] == "running"
    })
    .await;
    assert_eq!(step(&under_way, "start")["state"], "done");
    let canceled = app
        .call(&user, "/cancel-file-job", Some(json!({ "id": job["id"] })))
        .await;
    assert_eq!(canceled.status, StatusCode::OK, "{}", canceled.body);
    let stopped = &canceled.body["job"];
    assert_eq!(stopped["state"], "stopped", "{stopped}");
    assert_eq!(
        names(stopped),
        ["long cut.mp4"],
        "the finished, kept step's file stays"
    );
    assert_eq!(step(stopped, "slow")["state"], "stopped");
    assert_eq!(step(stopped, "zip")["state"], "stopped");
    assert!(stopped["seconds"].as_f64().unwrap() > 0.0);
    assert_eq!(
        keys_under_job(&app, &user, &job["id"]).await,
        keys_of_files(&app, stopped).await
    );
}

#[tokio::test]
async fn a_worker_killed_mid_chain_finishes_it_once_without_running_earlier_steps_again() {
    let mut app = TestApp::spawn().await;
    let first = app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let clip = app
        .upload(
            &user,
            "long.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=480x270:rate=25", 20.0, &[]),
        )
        .await;
    let job = app.create_job(&user, slow_chain(&clip)).await;
    wait_until(&app, &user, &job["id"], |job| {
        step(job, "slow")["state"] == "running"
    })
    .await;
    let mut db = app.db().await;
    let killed_at: chrono::DateTime<chrono::Utc> = sqlx::query_scalar("select now()")
        .fetch_one(&mut db)
        .await
        .unwrap();
    app.kill_worker(first);
    app.start_worker(&[]).await;
    let ended = app.wait_job(&user, &job["id"]).await;
    assert_done(&ended);
    assert_eq!(names(&ended), ["long cut.mp4", "webm.zip"], "{ended}");
    let runs = sqlx::query(
        "select step, started_at, ended_at from file_job_runs where job_id = $1::uuid order by step",
    )
    .bind(job["id"].as_str().unwrap())
    .fetch_all(&mut db)
    .await
    .unwrap();
    assert_eq!(runs.len(), 3);
    let ended_at = |n: usize| runs[n].get::<chrono::DateTime<chrono::Utc>, _>("ended_at");
    assert!(
        ended_at(0) < killed_at,
        "the first step ran once, before the kill"
    );
    assert!(
        ended_at(1) > killed_at,
        "the slow step ran again, on the second worker"
    );
    let attempts: i32 = sqlx::query_scalar("select attempts from file_jobs where id = $1::uuid")
        .bind(job["id"].as_str().unwrap())
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(attempts, 2);
    let zipped = app
        .download(&user, ended["files"][1]["id"].as_str().unwrap())
        .await;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zipped)).unwrap();
    let entries: Vec<String> = archive.file_names().map(|n| n.unwrap().to_string()).collect();
    assert_eq!(entries, ["long cut.webm"]);
    let mut webm = Vec::new();
    std::io::Read::read_to_end(&mut archive.by_index(0).unwrap(), &mut webm).unwrap();
    let probe = ffprobe(&webm, "webm");
    assert!(
        probe["format"]["duration"]
            .as_str()
            .unwrap()
            .parse::<f64>()
            .unwrap()
            > 19.0,
        "{probe}"
    );
    assert_eq!(
        keys_under_job(&app, &user, &job["id"]).await,
        keys_of_files(&app, &ended).await
    );
}

#[tokio::test]
async fn a_failed_chain_tried_again_goes_on_from_what_it_made() {
    let mut app = TestApp::spawn().await;
    // A worker whose jobs may run 3 seconds: the slow step runs past it and fails the chain.
    let hurried = app.start_worker(&[("DRIVE_JOB_TIME_LIMIT_SECONDS", "3")]).await;
    let user = app.user(Some("Pro")).await;
    let clip = app
        .upload(
            &user,
            "long.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=480x270:rate=25", 60.0, &[]),
        )
        .await;
    let mut chain = slow_chain(&clip);
    chain["steps"][0]["options"]["end"] = json!(60);
    let job = app.create_job(&user, chain).await;
    let failed = app.wait_job(&user, &job["id"]).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(
        failed["error"].as_str().unwrap().contains("time limit"),
        "{failed}"
    );
    assert_eq!(step(&failed, "start")["state"], "done");
    assert_eq!(names(&failed), ["long cut.mp4"]);
    assert_eq!(
        keys_under_job(&app, &user, &job["id"]).await,
        keys_of_files(&app, &failed).await
    );
    let mut db = app.db().await;
    let first_cut: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("select ended_at from file_job_runs where job_id = $1::uuid and step = 0")
            .bind(job["id"].as_str().unwrap())
            .fetch_one(&mut db)
            .await
            .unwrap();

    // Only an ended job that did not finish can be tried again, and only by its owner.
    let other = app.user(Some("Pro")).await;
    app.call(&other, "/retry-file-job", Some(json!({ "id": job["id"] })))
        .await
        .assert_error(404, "job_not_found");
    app.kill_worker(hurried);
    app.start_worker(&[]).await;
    let retried = app
        .call(&user, "/retry-file-job", Some(json!({ "id": job["id"] })))
        .await;
    assert_eq!(retried.status, StatusCode::OK, "{}", retried.body);
    assert_eq!(retried.body["job"]["id"], job["id"], "the same job");
    assert!(retried.body["job"]["error"].is_null());
    let ended = app.wait_job(&user, &job["id"]).await;
    assert_done(&ended);
    assert_eq!(
        names(&ended),
        ["long cut.mp4", "webm.zip"],
        "the cut is not made twice: {ended}"
    );
    let cut_again: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("select ended_at from file_job_runs where job_id = $1::uuid and step = 0")
            .bind(job["id"].as_str().unwrap())
            .fetch_one(&mut db)
            .await
            .unwrap();
    assert_eq!(cut_again, first_cut, "the first step did not run again");
    app.call(&user, "/retry-file-job", Some(json!({ "id": job["id"] })))
        .await
        .assert_error(409, "job_not_retryable");
    let events = app
        .wait_events(&user, json!({ "kinds": ["job"], "jobId": job["id"] }), 2)
        .await;
    let states: Vec<&str> = events
        .iter()
        .map(|e| e["job"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["failed", "done"], "an event for each end");
    assert_eq!(
        keys_under_job(&app, &user, &job["id"]).await,
        keys_of_files(&app, &ended).await
    );
}

#[tokio::test]
async fn an_idempotency_key_answers_the_same_job_and_never_a_second() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let a = app
        .upload(
            &user,
            "a.bin",
            "Other",
            "application/octet-stream",
            drive_tests::bytes(100, 1),
        )
        .await;
    let b = app
        .upload(
            &user,
            "b.bin",
            "Other",
            "application/octet-stream",
            drive_tests::bytes(100, 2),
        )
        .await;
    let ask = |file: &drive_core::id::FileId| json!({ "jobType": "checksum", "fileIds": [file], "idempotencyKey": "order-1234" });
    let first = app.create_job(&user, ask(&a)).await;
    let again = app.call(&user, "/create-file-job", Some(ask(&a))).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["job"]["id"], first["id"], "the same job");
    // The key given for another job is refused; another account's key is its own.
    app.call(&user, "/create-file-job", Some(ask(&b)))
        .await
        .assert_error(409, "idempotency_key_reused");
    let other = app.user(Some("Pro")).await;
    let theirs = app
        .upload(
            &other,
            "c.bin",
            "Other",
            "application/octet-stream",
            drive_tests::bytes(100, 3),
        )
        .await;
    let own = app.create_job(&other, ask(&theirs)).await;
    assert_ne!(own["id"], first["id"]);
    // A chain with a key likewise.
    let chain = json!({ "fileIds": [b], "steps": [{ "jobType": "checksum" }], "idempotencyKey": "chain-1" });
    let once = app.create_job(&user, chain.clone()).await;
    let twice = app.call(&user, "/create-file-job", Some(chain)).await;
    assert_eq!(twice.body["job"]["id"], once["id"], "{}", twice.body);
    let mut db = app.db().await;
    let jobs: i64 = sqlx::query_scalar(
        "select count(*) from file_jobs where user_id = $1::uuid and job_type <> 'readMetadata'",
    )
    .bind(user.id.to_string())
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(jobs, 2);
    // Past 24 hours the key is free again.
    sqlx::query("update file_jobs set created_at = created_at - interval '25 hours' where id = $1::uuid")
        .bind(first["id"].as_str().unwrap())
        .execute(&mut db)
        .await
        .unwrap();
    let later = app.create_job(&user, ask(&a)).await;
    assert_ne!(later["id"], first["id"]);
}

#[tokio::test]
async fn a_template_is_checked_once_kept_by_name_and_run_on_files() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let steps = json!([
        { "jobType": "convert", "options": { "format": "jpg", "maxEdge": 32 } },
        { "name": "book", "jobType": "makePdf", "options": { "name": "book" } },
    ]);
    let made = app
        .call(
            &user,
            "/create-job-template",
            Some(json!({ "name": "pictures to a book", "steps": steps })),
        )
        .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let template = &made.body["template"];
    assert_eq!(
        template["steps"][1]["use"],
        json!(["convert"]),
        "defaults filled in: {template}"
    );
    app.call(
        &user,
        "/create-job-template",
        Some(json!({ "name": "pictures to a book", "steps": steps })),
    )
    .await
    .assert_error(409, "template_name_taken");
    // Checked without files: a step that could never get a file of its kind is refused.
    let bad = json!({ "name": "bad", "steps": [{ "jobType": "cut" }, { "jobType": "zip" }, { "jobType": "proxy" }] });
    app.call(&user, "/create-job-template", Some(bad))
        .await
        .assert_bad_field("invalid_field", "steps[2].use");
    let listed = app.call(&user, "/select-job-templates", None).await;
    assert_eq!(
        listed.body["templates"].as_array().unwrap().len(),
        1,
        "{}",
        listed.body
    );

    let a = app.upload(&user, "a.png", "Image", "image/png", png(64, 1)).await;
    let b = app.upload(&user, "b.png", "Image", "image/png", png(64, 2)).await;
    let job = app
        .create_job(&user, json!({ "templateId": template["id"], "fileIds": [a, b] }))
        .await;
    let ended = app.wait_job(&user, &job["id"]).await;
    assert_done(&ended);
    assert_eq!(names(&ended), ["book.pdf"]);
    // A template is its account's own.
    let other = app.user(Some("Pro")).await;
    let theirs = app
        .upload(&other, "c.png", "Image", "image/png", png(64, 3))
        .await;
    app.call(
        &other,
        "/create-file-job",
        Some(json!({ "templateId": template["id"], "fileIds": [theirs] })),
    )
    .await
    .assert_error(404, "template_not_found");
    app.call(
        &other,
        "/delete-job-template",
        Some(json!({ "id": template["id"] })),
    )
    .await
    .assert_error(404, "template_not_found");
    let both = json!({ "templateId": template["id"], "steps": steps, "fileIds": [a] });
    app.call(&user, "/create-file-job", Some(both))
        .await
        .assert_bad_field("invalid_field", "templateId");
    let deleted = app
        .call(
            &user,
            "/delete-job-template",
            Some(json!({ "id": template["id"] })),
        )
        .await;
    assert_eq!(deleted.body["deleted"], template["id"], "{}", deleted.body);
    let listed = app.call(&user, "/select-job-templates", None).await;
    assert_eq!(listed.body["templates"], json!([]));
    // The job made from it is untouched.
    assert_done(&app.job(&user, &job["id"]).await);
}

#[tokio::test]
async fn a_job_s_end_is_posted_signed_to_its_notify_url_with_the_caller_s_metadata() {
    let receiver = drive_tests::receiver::Receiver::start().await;
    let mut app = TestApp::spawn_with(&receiver.trust()).await;
    app.start_worker(&receiver.trust()).await;
    let user = app.user(Some("Pro")).await;
    let a = app.upload(&user, "a.png", "Image", "image/png", png(32, 1)).await;
    // Refused before anything is queued: a link that is not https, metadata with no link.
    let plain = json!({ "jobType": "checksum", "fileIds": [a], "notifyUrl": "http://example.com/in" });
    app.call(&user, "/create-file-job", Some(plain))
        .await
        .assert_bad_field("url_refused", "notifyUrl");
    let stray = json!({ "jobType": "checksum", "fileIds": [a], "clientMetadata": { "order": 7 } });
    app.call(&user, "/create-file-job", Some(stray))
        .await
        .assert_bad_field("invalid_field", "clientMetadata");

    // The first try is refused; the next is taken.
    receiver.plan(vec![drive_tests::receiver::Reply::Status(500)]);
    let asked = json!({
        "fileIds": [a],
        "steps": [{ "jobType": "convert", "options": { "format": "webp" } }],
        "notifyUrl": format!("{}/jobs/done", receiver.url),
        "clientMetadata": { "order": 7, "customer": "Acme" },
    });
    let created = app.call(&user, "/create-file-job", Some(asked)).await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.body);
    let secret = created.body["notifySecret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("jnsec_"), "{}", created.body);
    let job = created.body["job"].clone();
    let received = receiver.wait_for(2, Duration::from_secs(30)).await;
    assert_eq!((received[0].answered, received[1].answered), (500, 200));
    let taken = &received[1];
    assert_eq!(taken.path, "/jobs/done");
    assert!(taken.signed_by(&secret), "signed with the job's secret");
    assert!(!taken.signed_by("jnsec_0000"), "and no other");
    assert_eq!(taken.headers["x-drive-job-id"], job["id"].as_str().unwrap());
    let body = taken.json();
    assert_eq!(body["job"]["id"], job["id"]);
    assert_eq!(body["job"]["state"], "done");
    assert_eq!(body["job"]["files"][0]["fileName"], "a.webp");
    assert_eq!(body["clientMetadata"], json!({ "order": 7, "customer": "Acme" }));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.received().len(), 2, "sent until taken, then never again");
}

#[tokio::test]
async fn a_last_step_stopped_part_way_makes_only_the_rest_of_its_files_when_tried_again() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let clip = app
        .upload(
            &user,
            "long.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=320x240:rate=25", 120.0, &[]),
        )
        .await;
    let chain = json!({
        "fileIds": [clip],
        "steps": [{ "jobType": "stills", "options": { "every": 0.5 } }],
    });
    let job = app.create_job(&user, chain).await;
    // Stopped once it has made a few of its stills.
    app.wait_made(&user, &job["id"], 3).await;
    let stopped = app
        .call(&user, "/cancel-file-job", Some(json!({ "id": job["id"] })))
        .await;
    assert_eq!(stopped.body["job"]["state"], "stopped", "{}", stopped.body);
    let before = stopped.body["job"]["files"].as_array().unwrap().len();
    assert!(
        (3..240).contains(&before),
        "stopped part-way: {before} of 240 stills"
    );
    let retried = app
        .call(&user, "/retry-file-job", Some(json!({ "id": job["id"] })))
        .await;
    assert_eq!(retried.status, StatusCode::OK, "{}", retried.body);
    let ended = app.wait_job(&user, &job["id"]).await;
    assert_done(&ended);
    let made = names(&ended);
    assert_eq!(made.len(), 240, "{made:?}");
    let mut distinct = made.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 240, "no still made twice");
    assert!(made.iter().all(|name| !name.contains(" (2)")), "{made:?}");
    let ids: std::collections::HashSet<&str> = ended["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 240, "each file listed once");
    assert_eq!(
        keys_under_job(&app, &user, &job["id"]).await,
        keys_of_files(&app, &ended).await
    );
}
