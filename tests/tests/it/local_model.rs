//! The agent with its local default model, not a scripted one: `drive-llm` running
//! Qwen2.5-Coder-1.5B-Instruct (installed by the scripts), called by a real worker, doing a
//! real task on real files through the A2A interface.

use std::collections::BTreeMap;
use std::io::Read;
use std::time::Duration;

use drive_tests::local_model::LocalModel;
use drive_tests::media::text_pdf;
use drive_tests::*;
use serde_json::{Value, json};

use super::agent::rpc as a2a;

#[tokio::test]
async fn the_local_model_zips_every_pdf_in_invoices_and_gives_a_working_link() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // Three invoices in /invoices; beside them a note that is no PDF, and elsewhere a PDF that
    // is no invoice: the zip must hold exactly the three.
    let mut invoices = BTreeMap::new();
    let mut placed = Vec::new();
    for month in ["january", "february", "march"] {
        let name = format!("invoice-{month}.pdf");
        let bytes = text_pdf(&[vec![format!("Invoice for {month}: 120 EUR")]]);
        let id = app
            .upload(&user, &name, "Pdf", "application/pdf", bytes.clone())
            .await;
        placed.push((id, "/invoices"));
        invoices.insert(name, bytes);
    }
    let note = app
        .upload(&user, "to-pay.txt", "Text", "text/plain", b"pay them".to_vec())
        .await;
    placed.push((note, "/invoices"));
    let report = app
        .upload(
            &user,
            "report.pdf",
            "Pdf",
            "application/pdf",
            text_pdf(&[vec!["Quarterly report".into()]]),
        )
        .await;
    placed.push((report, "/reports"));
    for (id, folder) in placed {
        let moved = app
            .call(
                &user,
                "/move-files",
                Some(json!({ "fileIds": [id], "folder": folder })),
            )
            .await;
        assert_eq!(moved.status, 200, "{}", moved.body);
    }
    let model = LocalModel::start().await;
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "qwen2.5-coder-1.5b-instruct"),
        ("DRIVE_AGENT_TIMEOUT_SECONDS", "600"),
    ])
    .await;

    let started = std::time::Instant::now();
    let sent = a2a(
        &app,
        &user.api_token,
        "SendMessage",
        json!({
            "message": {
                "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
                "parts": [{ "text": "zip every PDF in /invoices and give me a link" }]
            },
            "configuration": { "returnImmediately": true }
        }),
    )
    .await;
    let id = sent["result"]["task"]["id"].clone();
    let task = loop {
        let got = a2a(&app, &user.api_token, "GetTask", json!({ "id": id })).await;
        let state = got["result"]["status"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if state != "TASK_STATE_WORKING" {
            break got["result"].clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(900),
            "the task did not end in 15 minutes: {got}"
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    eprintln!(
        "the local model finished in {:.1} s: {task}",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");

    // The reply carries a link to a zip holding exactly the three invoices, byte for byte.
    let parts = task["status"]["message"]["parts"].as_array().unwrap();
    let zips: Vec<&Value> = parts
        .iter()
        .filter(|p| p["filename"].as_str().is_some_and(|n| n.ends_with(".zip")))
        .collect();
    assert_eq!(zips.len(), 1, "one zip linked: {task}");
    let (status, bytes) = get(zips[0]["url"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{task}");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    let mut found = BTreeMap::new();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).unwrap();
        let mut content = Vec::new();
        entry.read_to_end(&mut content).unwrap();
        let name = entry
            .name()
            .expect("a UTF-8 name")
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        found.insert(name, content);
    }
    assert_eq!(found, invoices, "the zip holds exactly the PDFs in /invoices");
}
