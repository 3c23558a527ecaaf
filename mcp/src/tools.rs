//! The seven tools of the library and `run_template`, served from the client library's catalogue
//! ([`drive_client::tools`]): upload a file and get its link, a fresh link, the library newest
//! first, trash or delete, restore, public or private, and storage usage. Each declares the JSON
//! Schemas of its input and its output; failures come back as tool errors carrying the drive's
//! sentence and what to do next. An MCP client is answered directly ([`Direct`]).

use std::sync::Arc;

use drive_client::tools::{Direct, Failure, Tool};
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::{ServerHandler, tool_handler};
use serde_json::Value;

use crate::callers::Callers;

/// The tool server; one per MCP session.
#[derive(Clone)]
pub struct DriveTools {
    callers: Arc<Callers>,
    tool_router: ToolRouter<DriveTools>,
}

impl DriveTools {
    /// Over stdio: `upload_file` takes a local path.
    pub fn local(callers: Arc<Callers>) -> DriveTools {
        DriveTools::serving(callers, Tool::UploadLocalFile)
    }

    /// Over HTTP: `upload_file` takes the bytes, base64-encoded.
    pub fn remote(callers: Arc<Callers>) -> DriveTools {
        DriveTools::serving(callers, Tool::UploadSentFile)
    }

    fn serving(callers: Arc<Callers>, upload: Tool) -> DriveTools {
        let mut tool_router = ToolRouter::new();
        for tool in std::iter::once(upload)
            .chain(Tool::LIBRARY)
            .chain(Tool::MCP_EXTRA)
        {
            tool_router.add_route(ToolRoute::new_dyn(declared(tool), move |context| {
                Box::pin(call(tool, context))
            }));
        }
        DriveTools { callers, tool_router }
    }
}

/// The tool as MCP declares it.
fn declared(tool: Tool) -> rmcp::model::Tool {
    let hints = tool.hints();
    let annotations = ToolAnnotations::from_raw(
        Some(tool.title().to_string()),
        hints.read_only,
        hints.destructive,
        hints.idempotent,
        hints.open_world,
    );
    let mut declared = rmcp::model::Tool::new(tool.name(), tool.description(), Arc::new(tool.input_schema()))
        .annotate(annotations);
    if let Some(output) = tool.output_schema() {
        declared = declared.with_raw_output_schema(Arc::new(output));
    }
    declared
}

/// Runs `tool` as the caller: its answer as structured content, or its failure as a tool error.
async fn call(
    tool: Tool,
    context: ToolCallContext<'_, DriveTools>,
) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
    let outcome = match context.service.callers.client(&context.request_context) {
        Ok(client) => {
            let arguments = context.arguments.map_or(Value::Null, Value::Object);
            tool.run(&client, &mut Direct, arguments)
                .await
                .map_err(Failure::explain)
        }
        Err(failure) => Err(failure),
    };
    Ok(match outcome {
        Ok(answer) => CallToolResult::structured(answer),
        Err(failure) => CallToolResult::error(vec![ContentBlock::text(failure.to_string())]),
    }
    .into())
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DriveTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("drive-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools for the user's Drive: upload_file stores a file and answers its link; \
                 list_files pages through the library newest first; get_download_link makes a \
                 fresh link; set_file_access makes a file public or private; remove_files trashes \
                 (or, with permanently, deletes for good); restore_files brings trashed files \
                 back; get_storage_usage says what is used and left.",
            )
    }
}
