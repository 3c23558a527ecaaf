//! A file request's sender, as its page acts, through the same routes and with no account:
//! start a drop, announce each file, send its bytes to the store (a form, or parts), record it,
//! finish the drop.

use serde_json::{Value, json};

use crate::{Reply, TestApp, post_form, put};

/// A sender's drop to a request.
pub struct Sender {
    pub token: String,
    pub drop_id: String,
}

/// Calls a sender route with no credentials.
pub async fn call(app: &TestApp, route: &str, body: Value) -> Reply {
    app.send(None, None, route, Some(body)).await
}

impl Sender {
    /// Starts a drop to `request_id`; panics unless the drive takes it.
    pub async fn start(app: &TestApp, request_id: &str, name: &str, note: Option<&str>) -> Sender {
        let started = call(
            app,
            "/start-request-drop",
            json!({ "requestId": request_id, "senderName": name, "note": note }),
        )
        .await;
        assert_eq!(started.status, 200, "start-request-drop: {}", started.body);
        Sender {
            token: started.body["token"].as_str().unwrap().to_string(),
            drop_id: started.body["dropId"].as_str().unwrap().to_string(),
        }
    }

    /// Announces a file: the drive's answer (where to send it, or why not).
    pub async fn announce(&self, app: &TestApp, name: &str, size: usize) -> Reply {
        call(
            app,
            "/add-request-file",
            json!({ "token": self.token, "fileName": name, "fileSize": size }),
        )
        .await
    }

    /// Sends the bytes of an announced file where `added` says: every part (or the form).
    pub async fn send_bytes(&self, added: &Value, bytes: &[u8]) {
        if let Some(form) = added.get("form") {
            let stored = post_form(form, bytes.to_vec(), "application/octet-stream").await;
            assert!(stored.is_success(), "the store refused the form: {stored}");
            return;
        }
        let parts = &added["parts"];
        let part_size = parts["partSize"].as_u64().unwrap() as usize;
        for part in parts["signedParts"].as_array().unwrap() {
            let n = part["partNumber"].as_u64().unwrap() as usize;
            let start = (n - 1) * part_size;
            let end = (start + part_size).min(bytes.len());
            let stored = put(part["url"].as_str().unwrap(), bytes[start..end].to_vec()).await;
            assert!(stored.is_success(), "the store refused part {n}: {stored}");
        }
    }

    /// Records an announced file once its bytes are sent.
    pub async fn finish_file(&self, app: &TestApp, arrival_id: &Value) -> Reply {
        call(
            app,
            "/finish-request-file",
            json!({ "token": self.token, "arrivalId": arrival_id }),
        )
        .await
    }

    /// Announces, sends and records one file; panics unless each step succeeds.
    pub async fn send(&self, app: &TestApp, name: &str, bytes: &[u8]) {
        let added = self.announce(app, name, bytes.len()).await;
        assert_eq!(added.status, 200, "add-request-file {name}: {}", added.body);
        self.send_bytes(&added.body, bytes).await;
        let finished = self.finish_file(app, &added.body["arrivalId"]).await;
        assert_eq!(
            finished.status, 200,
            "finish-request-file {name}: {}",
            finished.body
        );
    }

    /// Says the drop is done.
    pub async fn finish(&self, app: &TestApp) -> Reply {
        call(app, "/finish-request-drop", json!({ "token": self.token })).await
    }
}
