//! The OpenAPI document is generated from the routes: it names every route the server
//! answers, and every route it names is answered.

use drive_tests::*;

const ROUTES: [&str; 35] = [
    "/exchange-token",
    "/generate-file-urls",
    "/insert-file",
    "/create-multipart-upload",
    "/sign-upload-parts",
    "/complete-multipart-upload",
    "/abort-multipart-upload",
    "/generate-download-url",
    "/select-user-files",
    "/toggle-file-access",
    "/get-user-storage-usage",
    "/trash-files",
    "/restore-files",
    "/select-trashed-files",
    "/purge-trashed-files",
    "/delete-files",
    "/select-drive-events",
    "/move-files",
    "/tag-files",
    "/update-file-tags",
    "/update-file-description",
    "/create-playlist",
    "/add-to-playlist",
    "/reorder-playlist",
    "/create-gallery",
    "/add-to-gallery",
    "/reorder-gallery",
    "/select-collections",
    "/select-file-views",
    "/search-files",
    "/create-archive-request",
    "/create-file-job",
    "/select-file-jobs",
    "/cancel-file-job",
    "/openapi.json",
];

#[tokio::test]
async fn the_document_is_openapi_3_1_at_the_specs_version_and_matches_the_routes() {
    let app = TestApp::spawn().await;
    let doc: serde_json::Value = reqwest::get(format!("{}/openapi.json", app.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    assert_eq!(doc["info"]["version"], "2026.09.28");
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    for route in &ROUTES[..ROUTES.len() - 1] {
        assert!(
            paths.iter().any(|p| p == route),
            "{route} missing from the document"
        );
        let op = &doc["paths"][route]["post"];
        assert!(op.is_object(), "{route} is not a POST");
        assert!(
            (op["responses"]["200"].is_object() || op["responses"]["202"].is_object())
                && op["responses"]["default"].is_object(),
            "{route}"
        );
    }
    // Every documented route exists on the server (anything but 404/405 answers).
    for path in paths {
        let status = app
            .http
            .post(format!("{}{path}", app.url))
            .send()
            .await
            .unwrap()
            .status();
        assert!(status != 404 && status != 405, "{path} answered {status}");
    }
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
    assert!(doc["components"]["schemas"]["UploadInput"].is_object());
}
