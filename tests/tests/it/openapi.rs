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
                && op["responses"].as_object().unwrap().iter().any(
                    |(status, r)| status.starts_with('4') && r["content"]["application/json"].is_object()
                )
                && op["security"].is_array(),
            "{route}"
        );
    }
    // Every documented route exists on the server with its method: it answers anything but the
    // router's own 404 (no body) or 405. The one GET, a public link, is asked for a file that
    // does not exist, which its handler answers with a 404 of its own.
    for path in paths {
        let method = if doc["paths"][path]["post"].is_object() {
            reqwest::Method::POST
        } else {
            reqwest::Method::GET
        };
        let url = format!(
            "{}{}",
            app.url,
            path.replace("{id}", &uuid::Uuid::nil().to_string())
        );
        let reply = app.http.request(method, url).send().await.unwrap();
        let status = reply.status();
        let answered = reply
            .json::<serde_json::Value>()
            .await
            .is_ok_and(|body| body["code"].is_string());
        assert!(
            status != 405 && (status != 404 || answered),
            "{path} answered {status}"
        );
    }
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
    assert!(doc["components"]["schemas"]["UploadInput"].is_object());
    // A pipeline's step states its options by its jobType, as a job's do: if cut, CutOptions.
    let conditions = doc["components"]["schemas"]["StepInput"]["allOf"]
        .as_array()
        .expect("StepInput's conditions");
    let cut = conditions
        .iter()
        .find(|c| c["if"]["properties"]["jobType"]["const"] == "cut")
        .expect("a condition for cut");
    assert_eq!(
        cut["then"]["properties"]["options"]["oneOf"][1]["$ref"], "#/components/schemas/CutOptions",
        "{cut}"
    );
    assert!(doc["components"]["schemas"]["CutOptions"]["properties"]["start"].is_object());
}
