//! Each provider's own answers to trouble: its rate limit, overload, key
//! refused and invalid request, in its words and with its headers.

use super::{Api, Body, Reply, Trouble, REFUSAL};
use serde_json::{json, Value};

/// Each provider's own answer to trouble.
pub(super) fn troubled(api: Api, trouble: Trouble) -> Reply {
    let (status, retry) = match trouble {
        Trouble::Hang => {
            return Reply {
                status: 200,
                headers: Vec::new(),
                body: Body::Hang,
                close: true,
                spoil: None,
            }
        }
        Trouble::RateLimited { retry_after_secs } => (429, Some(retry_after_secs)),
        Trouble::Overloaded { status } => (status, None),
        Trouble::Invalid => return Reply::json(400, invalid(api)),
        Trouble::Unauthorized => return Reply::json(401, unauthorized(api)),
        // Answered, then spoiled (see `answer`).
        Trouble::Truncated | Trouble::TrailingGarbage => return Reply::json(500, Value::Null),
    };
    let body = match (api, retry) {
        (Api::Anthropic, Some(_)) => json!({"type": "error", "error": {"type": "rate_limit_error",
            "message": "Number of request tokens has exceeded your per-minute rate limit"}}),
        (Api::Anthropic, None) => json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        (Api::Gemini, Some(secs)) => json!({"error": {"code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED", "details": [{
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": format!("{secs}s")}]}}),
        (Api::Gemini, None) => json!({"error": {"code": status,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE"}}),
        (_, Some(secs)) => json!({"error": {"message": format!(
            "Rate limit reached for requests. Please try again in {secs}s."),
            "type": "requests", "code": "rate_limit_exceeded"}}),
        // OpenAI's 500 says it is busy.
        (_, None) if status == 500 => json!({"error": {"message":
            "We're currently experiencing high demand, which may cause temporary errors.",
            "type": "server_error", "param": null, "code": null}}),
        (_, None) => {
            json!({"error": {"message": "The server is overloaded. Please try again later.",
            "type": "server_error", "code": null}})
        }
    };
    let mut reply = Reply::json(status, body);
    if let Some(secs) = retry {
        reply.headers.push(("retry-after".into(), secs.to_string()));
        // Anthropic's subscription limit headers, which Claude Code turns
        // into its `rate_limit_event`.
        if api == Api::Anthropic {
            let reset = crate_now() + secs;
            reply.headers.extend([
                (
                    "anthropic-ratelimit-unified-status".into(),
                    "rejected".into(),
                ),
                (
                    "anthropic-ratelimit-unified-reset".into(),
                    reset.to_string(),
                ),
            ]);
        }
    }
    reply
}

/// Each provider's error for a key it does not accept.
fn unauthorized(api: Api) -> Value {
    match api {
        Api::Anthropic => json!({"type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
        Api::Gemini => json!({"error": {"code": 401,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "UNAUTHENTICATED"}}),
        _ => json!({"error": {"message": "Incorrect API key provided: test-key.",
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
    }
}

/// Each provider's invalid-request error, saying [`REFUSAL`].
fn invalid(api: Api) -> Value {
    match api {
        Api::Anthropic => json!({"type": "error",
            "error": {"type": "invalid_request_error", "message": REFUSAL}}),
        Api::Gemini => json!({"error": {"code": 400, "message": REFUSAL,
            "status": "INVALID_ARGUMENT"}}),
        _ => json!({"error": {"message": REFUSAL, "type": "invalid_request_error",
            "param": null, "code": null}}),
    }
}

fn crate_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
