//! Qwen2.5's chat format with tools, as its own chat template writes it (the template in the
//! model's files is Jinja, which llama.cpp's C template code does not run with tools): a system
//! turn listing the tools as JSON inside `<tools>`, calls written as JSON inside `<tool_call>`,
//! and tool results handed back in a user turn inside `<tool_response>`. And the way back: the
//! calls in what the model wrote.

use serde_json::{Value, json};

/// The system turn when a conversation has none, as the template has it.
const DEFAULT_SYSTEM: &str = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";

/// Why a conversation cannot be written out.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PromptError {
    #[error("messages[{0}].role must be system, user, assistant or tool")]
    Role(usize),
    #[error("messages[{0}].content must be a string or an array of text parts")]
    Content(usize),
    #[error(
        "tools[{0}] must be {{\"type\": \"function\", \"function\": {{\"name\": …}}}}, named by 1 to 64 letters, digits, _ or -"
    )]
    Tool(usize),
}

/// The prompt for `messages` with `tools` (an empty list: none), ending where the assistant's
/// answer starts.
pub fn render(messages: &[Value], tools: &[Value]) -> Result<String, PromptError> {
    for (i, tool) in tools.iter().enumerate() {
        if !tool["function"]["name"].as_str().is_some_and(is_tool_name) {
            return Err(PromptError::Tool(i));
        }
    }
    let mut out = String::new();
    let first_is_system = messages.first().is_some_and(|m| m["role"] == "system");
    let system = match first_is_system {
        true => content(&messages[0], 0)?,
        false => DEFAULT_SYSTEM.to_string(),
    };
    out.push_str("<|im_start|>system\n");
    out.push_str(&system);
    if !tools.is_empty() {
        out.push_str(
            "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
             You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
        );
        for tool in tools {
            out.push('\n');
            out.push_str(&python_json(tool));
        }
        out.push_str(
            "\n</tools>\n\nFor each function call, return a json object with function name and \
             arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": \
             <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
        );
    }
    out.push_str("<|im_end|>\n");
    let start = usize::from(first_is_system);
    for (i, message) in messages.iter().enumerate().skip(start) {
        let role = message["role"].as_str().unwrap_or_default();
        let calls = message["tool_calls"].as_array().filter(|c| !c.is_empty());
        match (role, calls) {
            ("system" | "user", _) | ("assistant", None) => {
                out.push_str(&format!(
                    "<|im_start|>{role}\n{}<|im_end|>\n",
                    content(message, i)?
                ));
            }
            ("assistant", Some(calls)) => {
                out.push_str("<|im_start|>assistant");
                let said = content(message, i)?;
                if !said.is_empty() {
                    out.push('\n');
                    out.push_str(&said);
                }
                for call in calls {
                    let function = if call["function"].is_object() {
                        &call["function"]
                    } else {
                        call
                    };
                    out.push_str("\n<tool_call>\n{\"name\": \"");
                    out.push_str(function["name"].as_str().unwrap_or_default());
                    out.push_str("\", \"arguments\": ");
                    out.push_str(&arguments(&function["arguments"]));
                    out.push_str("}\n</tool_call>");
                }
                out.push_str("<|im_end|>\n");
            }
            ("tool", _) => {
                let follows_tool = i > 0 && messages[i - 1]["role"] == "tool";
                if !follows_tool {
                    out.push_str("<|im_start|>user");
                }
                out.push_str("\n<tool_response>\n");
                out.push_str(&content(message, i)?);
                out.push_str("\n</tool_response>");
                let next_is_tool = messages.get(i + 1).is_some_and(|m| m["role"] == "tool");
                if !next_is_tool {
                    out.push_str("<|im_end|>\n");
                }
            }
            _ => return Err(PromptError::Role(i)),
        }
    }
    out.push_str("<|im_start|>assistant\n");
    Ok(out)
}

/// What the prompt is continued with when the answer must be a call: the model writes the JSON
/// inside the `<tool_call>` it was started on.
pub const FORCED_CALL_OPENING: &str = "<tool_call>\n";

/// A GBNF grammar for the JSON of one call of one of `names` (each [`is_tool_name`]):
/// `{"name": "…", "arguments": {…}}`, nothing after it (the sampler then allows only the end of
/// the turn).
pub fn call_grammar(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("\"\\\"{n}\\\"\"")).collect();
    format!(
        r#"root ::= "{{\"name\": " name ", \"arguments\": " object "}}"
name ::= {names}
value ::= object | array | string | number | ("true" | "false" | "null")
object ::= "{{" ws ( string ":" ws value ( "," ws string ":" ws value )* )? "}}"
array ::= "[" ws ( value ( "," ws value )* )? "]"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{{4}} ) )* "\""
number ::= "-"? ( [0-9] | [1-9] [0-9]{{0,15}} ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]{{1,3}} )?
ws ::= | " " | "\n" [ \t]{{0,20}}
"#,
        names = names.join(" | ")
    )
}

/// The calls written in `text` (each `<tool_call>{…}</tool_call>` whose JSON names a function),
/// and what is left of the text around them.
pub fn parse_calls(text: &str) -> (Vec<(String, String)>, String) {
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut remaining = text;
    while let Some(start) = remaining.find("<tool_call>") {
        rest.push_str(&remaining[..start]);
        let after = &remaining[start + "<tool_call>".len()..];
        let (inside, next) = match after.find("</tool_call>") {
            Some(end) => (&after[..end], &after[end + "</tool_call>".len()..]),
            None => (after, ""),
        };
        match serde_json::from_str::<Value>(inside.trim()) {
            Ok(call) if call["name"].is_string() => {
                let arguments = match &call["arguments"] {
                    Value::Null => "{}".to_string(),
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                calls.push((call["name"].as_str().unwrap_or_default().to_string(), arguments));
            }
            _ => rest.push_str(&remaining[start..remaining.len() - next.len()]),
        }
        remaining = next;
    }
    rest.push_str(remaining);
    (calls, rest.trim().to_string())
}

/// OpenAI's rule for function names, which also keeps them plain inside the grammar.
pub fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A message's text: a string, or the text parts of an array of parts.
fn content(message: &Value, index: usize) -> Result<String, PromptError> {
    match &message["content"] {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => parts
            .iter()
            .map(|p| p["text"].as_str().ok_or(PromptError::Content(index)))
            .collect::<Result<Vec<_>, _>>()
            .map(|texts| texts.join("")),
        _ => Err(PromptError::Content(index)),
    }
}

/// A call's arguments as the template writes them: JSON as it was sent (a string holding JSON,
/// as OpenAI's wire has it, verbatim: it is what the model wrote, so the cached prompt matches),
/// or an object written out.
fn arguments(arguments: &Value) -> String {
    match arguments {
        Value::String(s) if serde_json::from_str::<Value>(s).is_ok() => s.clone(),
        Value::String(s) => python_json(&json!(s)),
        Value::Null => "{}".to_string(),
        other => python_json(other),
    }
}

/// JSON as Jinja's `tojson` (Python's `json.dumps`) writes it, which is what the model was
/// trained on: `", "` and `": "` between items.
fn python_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_json(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_json).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list_tool() -> Value {
        // Keys in sorted order: serde_json keeps them so with or without `preserve_order`.
        json!({ "function": { "name": "list_files", "parameters": { "type": "object" } }, "type": "function" })
    }

    #[test]
    fn a_conversation_with_tools_is_written_as_qwen_s_template_writes_it() {
        let messages = [
            json!({ "role": "system", "content": "Be brief." }),
            json!({ "role": "user", "content": "What is there?" }),
            json!({ "role": "assistant", "content": null, "tool_calls": [
                { "id": "c1", "type": "function", "function": { "name": "list_files", "arguments": "{\"limit\": 2}" } }
            ] }),
            json!({ "role": "tool", "tool_call_id": "c1", "content": "{\"files\":[]}" }),
        ];
        let prompt = render(&messages, &[list_tool()]).unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
             You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n\
             {\"function\": {\"name\": \"list_files\", \"parameters\": {\"type\": \"object\"}}, \"type\": \"function\"}\n</tools>\n\n\
             For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n\
             <tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n\
             <|im_start|>user\nWhat is there?<|im_end|>\n\
             <|im_start|>assistant\n<tool_call>\n{\"name\": \"list_files\", \"arguments\": {\"limit\": 2}}\n</tool_call><|im_end|>\n\
             <|im_start|>user\n<tool_response>\n{\"files\":[]}\n</tool_response><|im_end|>\n\
             <|im_start|>assistant\n"
        );
    }

    #[test]
    fn without_tools_or_a_system_turn_the_default_system_turn_is_written() {
        let prompt = render(
            &[json!({ "role": "user", "content": [{ "type": "text", "text": "Hi" }] })],
            &[],
        )
        .unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n\
             <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn consecutive_tool_results_share_one_user_turn() {
        let messages = [
            json!({ "role": "user", "content": "x" }),
            json!({ "role": "tool", "content": "a" }),
            json!({ "role": "tool", "content": "b" }),
        ];
        let prompt = render(&messages, &[]).unwrap();
        assert!(
            prompt.ends_with(
                "<|im_start|>user\n<tool_response>\na\n</tool_response>\n<tool_response>\nb\n</tool_response><|im_end|>\n\
                 <|im_start|>assistant\n"
            ),
            "{prompt}"
        );
    }

    #[test]
    fn bad_messages_and_tools_are_named() {
        assert_eq!(
            render(&[json!({ "role": "robot", "content": "x" })], &[]),
            Err(PromptError::Role(0))
        );
        assert_eq!(
            render(&[json!({ "role": "user", "content": 3 })], &[]),
            Err(PromptError::Content(0))
        );
        assert_eq!(
            render(&[], &[json!({ "type": "function" })]),
            Err(PromptError::Tool(0))
        );
    }

    #[test]
    fn calls_are_read_from_text_and_the_rest_kept() {
        let (calls, rest) = parse_calls(
            "Sure.\n<tool_call>\n{\"name\": \"get_link\", \"arguments\": {\"fileId\": \"a\"}}\n</tool_call>\n\
             <tool_call>not json</tool_call>",
        );
        assert_eq!(
            calls,
            vec![("get_link".to_string(), "{\"fileId\":\"a\"}".to_string())]
        );
        assert_eq!(rest, "Sure.\n\n<tool_call>not json</tool_call>");
    }

    #[test]
    fn the_call_grammar_names_every_tool() {
        let grammar = call_grammar(&["list_files", "reply"]);
        assert!(
            grammar.contains(r#"name ::= "\"list_files\"" | "\"reply\"""#),
            "{grammar}"
        );
        assert!(
            grammar.starts_with(r#"root ::= "{\"name\": " name ", \"arguments\": " object "}""#),
            "{grammar}"
        );
    }
}
