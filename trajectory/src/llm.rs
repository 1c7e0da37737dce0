//! An OpenAI-compatible chat-completions client (image inputs, retries with backoff, token usage), shared
//! by the agent's policy and the evaluator's judge.

use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// Where and how to call the model.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// Base URL up to `/v1` (`https://api.openai.com/v1`); `/chat/completions` is appended.
    pub api_base: String,
    /// Model name.
    pub model: String,
    /// Bearer token (may be empty for local servers).
    pub api_key: String,
    /// Sampling temperature.
    pub temperature: f64,
    /// Completion budget per call.
    pub max_tokens: u32,
    /// The request field carrying `max_tokens`: `max_tokens`, or `max_completion_tokens` for newer
    /// OpenAI models.
    pub max_tokens_field: crate::MaxTokensField,
    /// Per-call timeout.
    pub timeout: Duration,
    /// Attempts on 429, 5xx and timeouts (1 = no retry).
    pub attempts: u32,
    /// First backoff; doubles per retry (a `Retry-After` header wins when present).
    pub backoff: Duration,
}

impl LlmConfig {
    /// Defaults for everything but where and which model.
    pub fn new(api_base: &str, model: &str, api_key: &str) -> Self {
        Self {
            api_base: api_base.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key: api_key.to_string(),
            temperature: 1.0,
            max_tokens: 1000,
            max_tokens_field: crate::MaxTokensField::MaxTokens,
            timeout: Duration::from_secs(120),
            attempts: 5,
            backoff: Duration::from_secs(2),
        }
    }
}

/// Token counts as the API reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Total.
    #[serde(default)]
    pub total_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
        self.total_tokens += o.total_tokens;
    }
}

/// One reply.
#[derive(Debug, Clone)]
pub struct Completion {
    /// The assistant's text.
    pub text: String,
    /// Tokens used (zero when the server does not say).
    pub usage: Usage,
    /// Attempts it took.
    pub attempts: u32,
    /// Wall time including retries.
    pub ms: u64,
}

/// Model call failures.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// Could not build the client.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// Gave up after retries.
    #[error("the model API at {url} failed after {attempts} attempts: {last}")]
    Exhausted {
        /// Endpoint.
        url: String,
        /// Attempts made.
        attempts: u32,
        /// Last error.
        last: String,
    },
    /// A non-retryable HTTP error (400, 401, 404 ...).
    #[error("the model API at {url} answered {status}: {body}")]
    Status {
        /// Endpoint.
        url: String,
        /// HTTP status.
        status: u16,
        /// Body, clipped.
        body: String,
    },
    /// 200 but not a chat completion.
    #[error("the model API at {url} sent a reply without a message: {detail}")]
    Shape {
        /// Endpoint.
        url: String,
        /// What is wrong.
        detail: String,
    },
}

/// A chat message in the API's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// system / user / assistant.
    pub role: String,
    /// A string, or a list of parts (text and image_url).
    pub content: serde_json::Value,
}

impl Message {
    /// Plain text.
    pub fn text(role: &str, text: &str) -> Self {
        Self { role: role.into(), content: serde_json::Value::String(text.into()) }
    }

    /// Text plus PNG images, inlined as data URLs. With no image it is plain text: servers that render
    /// chat templates from strings (llama.cpp's fallback formats) drop a text-only list of parts.
    pub fn with_images(role: &str, text: &str, pngs: &[&[u8]]) -> Self {
        if pngs.is_empty() {
            return Self::text(role, text);
        }
        let mut parts = vec![serde_json::json!({"type": "text", "text": text})];
        for png in pngs {
            let b64 = base64::engine::general_purpose::STANDARD.encode(png);
            parts.push(serde_json::json!({
                "type": "image_url",
                "image_url": {"url": format!("data:image/png;base64,{b64}")}
            }));
        }
        Self { role: role.into(), content: serde_json::Value::Array(parts) }
    }

    /// Number of images attached.
    pub fn image_count(&self) -> usize {
        match &self.content {
            serde_json::Value::Array(parts) => {
                parts.iter().filter(|p| p.get("type").and_then(|t| t.as_str()) == Some("image_url")).count()
            }
            _ => 0,
        }
    }
}

/// The client.
#[derive(Debug, Clone)]
pub struct Llm {
    cfg: LlmConfig,
    http: reqwest::Client,
}

#[derive(Deserialize)]
struct ChatReply {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ReplyMessage,
}

#[derive(Deserialize)]
struct ReplyMessage {
    #[serde(default)]
    content: Option<String>,
}

impl Llm {
    /// A client for `cfg`.
    pub fn new(cfg: LlmConfig) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .build()
            .map_err(|e| LlmError::Client(e.to_string()))?;
        Ok(Self { cfg, http })
    }

    /// The configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// Whether the server's `/models` listing says the model takes images: `Some(false)` only when the
    /// listing names the model with capabilities or input modalities and none is an image (llama.cpp's
    /// `capabilities`, `input_modalities` / `modalities` of other servers); None when it does not say,
    /// cannot be read, or the server has no such endpoint (OpenAI's listing does not say).
    pub async fn vision_support(&self) -> Option<bool> {
        let url = format!("{}/models", self.cfg.api_base);
        let mut req = self.http.get(&url).timeout(Duration::from_secs(10));
        if !self.cfg.api_key.is_empty() {
            req = req.bearer_auth(&self.cfg.api_key);
        }
        let resp = req.send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        let v: serde_json::Value = serde_json::from_str(&resp.text().await.ok()?).ok()?;
        vision_from_models(&v, &self.cfg.model)
    }

    /// One chat completion, retried on 429 / 5xx / timeouts / connection errors with exponential backoff.
    pub async fn chat(&self, messages: &[Message], temperature: f64) -> Result<Completion, LlmError> {
        let url = format!("{}/chat/completions", self.cfg.api_base);
        let mut body = serde_json::json!({
            "model": self.cfg.model,
            "messages": messages,
            "temperature": temperature,
        });
        body[self.cfg.max_tokens_field.as_str()] = self.cfg.max_tokens.into();
        let t0 = std::time::Instant::now();
        let mut delay = self.cfg.backoff;
        let mut last = String::new();
        let attempts = self.cfg.attempts.max(1);
        for attempt in 1..=attempts {
            let mut req = self.http.post(&url).json(&body);
            if !self.cfg.api_key.is_empty() {
                req = req.bearer_auth(&self.cfg.api_key);
            }
            let mut wait = delay;
            match req.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    if status.is_success() {
                        let text = resp.text().await.unwrap_or_default();
                        let reply: ChatReply = serde_json::from_str(&text)
                            .map_err(|e| LlmError::Shape { url: url.clone(), detail: e.to_string() })?;
                        let content =
                            reply.choices.into_iter().next().and_then(|c| c.message.content).ok_or_else(
                                || LlmError::Shape {
                                    url: url.clone(),
                                    detail: "no choices[0].message.content".into(),
                                },
                            )?;
                        return Ok(Completion {
                            text: content,
                            usage: reply.usage.unwrap_or_default(),
                            attempts: attempt,
                            ms: t0.elapsed().as_millis() as u64,
                        });
                    }
                    let retry_after = resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok());
                    let text = resp.text().await.unwrap_or_default();
                    let clipped: String = text.chars().take(500).collect();
                    if status.as_u16() != 429 && !status.is_server_error() {
                        return Err(LlmError::Status { url, status: status.as_u16(), body: clipped });
                    }
                    if let Some(s) = retry_after {
                        wait = Duration::from_secs_f64(s.clamp(0.0, 120.0));
                    }
                    last = format!("HTTP {status}: {clipped}");
                }
                Err(e) => last = e.to_string(),
            }
            if attempt < attempts {
                tracing::warn!("model call failed ({last}); retry {attempt}/{} in {wait:?}", attempts - 1);
                tokio::time::sleep(wait).await;
                delay = delay.saturating_mul(2);
            }
        }
        Err(LlmError::Exhausted { url, attempts, last })
    }
}

/// What a `/models` listing says of `model` taking images (see [`Llm::vision_support`]).
pub fn vision_from_models(listing: &serde_json::Value, model: &str) -> Option<bool> {
    let entries = ["data", "models"]
        .iter()
        .filter_map(|k| listing.get(*k).and_then(|d| d.as_array()))
        .flatten()
        .filter(|e| {
            ["id", "name", "model"].iter().any(|k| e.get(*k).and_then(|v| v.as_str()) == Some(model))
        });
    let mut verdict = None;
    for e in entries {
        for key in ["capabilities", "input_modalities", "modalities"] {
            let Some(list) = e.get(key).and_then(|c| c.as_array()) else { continue };
            let words: Vec<String> =
                list.iter().filter_map(|w| w.as_str()).map(|w| w.to_ascii_lowercase()).collect();
            let images =
                words.iter().any(|w| matches!(w.as_str(), "vision" | "multimodal" | "image" | "images"));
            verdict = Some(verdict.unwrap_or(false) || images);
        }
    }
    verdict
}

#[cfg(test)]
mod vision_tests {
    use super::*;

    #[test]
    fn model_listings_that_say_and_that_do_not() {
        let cases = [
            (serde_json::json!({"data": [{"id": "gpt-4o", "object": "model"}]}), "gpt-4o", None),
            (
                serde_json::json!({"models": [{"name": "gemma", "model": "gemma", "capabilities": ["completion"]}],
                                   "data": [{"id": "gemma"}]}),
                "gemma",
                Some(false),
            ),
            (
                serde_json::json!({"models": [{"model": "qwen-vl", "capabilities": ["completion", "multimodal"]}]}),
                "qwen-vl",
                Some(true),
            ),
            (
                serde_json::json!({"data": [{"id": "m", "input_modalities": ["text", "image"]}]}),
                "m",
                Some(true),
            ),
            (serde_json::json!({"data": [{"id": "m", "modalities": ["text"]}]}), "m", Some(false)),
            (serde_json::json!({"data": [{"id": "other", "modalities": ["text"]}]}), "m", None),
            (serde_json::json!({"error": "no"}), "m", None),
        ];
        for (i, (listing, model, want)) in cases.iter().enumerate() {
            assert_eq!(vision_from_models(listing, model), *want, "case {i}");
        }
    }
}
