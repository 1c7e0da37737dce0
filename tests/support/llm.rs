//! A local fake OpenAI-compatible model server: scripted replies, every request kept for assertions.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::*;

/// What the fake model answers.
pub(crate) enum Reply {
    /// A chat completion with this text.
    Text(String),
    /// An HTTP error status.
    Status(u16),
    /// Never answer (a model call that hangs until the client gives up).
    Hang,
}

/// One request the fake model received.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub auth: Option<String>,
    pub body: serde_json::Value,
}

/// A local server speaking the OpenAI chat-completions API with scripted replies; it keeps every request
/// so tests can check what the client sent. The reply callback runs on the server's task: an assertion
/// that fails inside it is caught, answered with a 500, and re-raised in the test when the `FakeLlm` is
/// dropped (or at [`FakeLlm::check`]), so it cannot pass unnoticed.
pub(crate) struct FakeLlm {
    pub addr: SocketAddr,
    pub seen: Arc<std::sync::Mutex<Vec<Seen>>>,
    failures: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.check();
        }
    }
}

impl FakeLlm {
    pub(crate) fn api_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub(crate) fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Fail the test if the reply callback panicked (an assertion inside it failed).
    pub(crate) fn check(&self) {
        let f = self.failures.lock().unwrap().clone();
        assert!(f.is_empty(), "the fake model's reply callback failed: {f:?}");
    }

    pub(crate) async fn start(
        reply: impl Fn(&serde_json::Value) -> Reply + Send + Sync + 'static,
    ) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<std::sync::Mutex<Vec<Seen>>> = Arc::default();
        let failures: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
        let reply = Arc::new(reply);
        let (log, failed) = (seen.clone(), failures.clone());
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { return };
                let (reply, log, failed) = (reply.clone(), log.clone(), failed.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req: Request<Incoming>| {
                        let (reply, log, failed) = (reply.clone(), log.clone(), failed.clone());
                        async move {
                            let auth = req
                                .headers()
                                .get(http::header::AUTHORIZATION)
                                .map(|v| v.to_str().unwrap().to_string());
                            let path = req.uri().path().to_string();
                            let bytes = req.into_body().collect().await.unwrap().to_bytes();
                            let body: serde_json::Value =
                                serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
                            log.lock().unwrap().push(Seen { auth, body: body.clone() });
                            let res = if path != "/v1/chat/completions" {
                                Response::builder().status(404).body(full("no such endpoint")).unwrap()
                            } else {
                                let answer =
                                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reply(&body)));
                                let answer = answer.unwrap_or_else(|p| {
                                    let msg = p
                                        .downcast_ref::<String>()
                                        .cloned()
                                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                        .unwrap_or_else(|| "panic".into());
                                    failed.lock().unwrap().push(msg);
                                    Reply::Status(500)
                                });
                                match answer {
                                    Reply::Text(t) => {
                                        let v = serde_json::json!({
                                            "id": "fake", "object": "chat.completion", "model": body["model"],
                                            "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant", "content": t}}],
                                            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
                                        });
                                        Response::builder()
                                            .header("content-type", "application/json")
                                            .body(full(v.to_string()))
                                            .unwrap()
                                    }
                                    Reply::Status(s) => Response::builder()
                                        .status(s)
                                        .body(full(format!("{{\"error\": \"scripted {s}\"}}")))
                                        .unwrap(),
                                    Reply::Hang => std::future::pending().await,
                                }
                            };
                            Ok::<_, Infallible>(res)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), svc)
                        .await;
                });
            }
        });
        FakeLlm { addr, seen, failures }
    }
}

/// The text of a chat request's first user message (the task statement).
pub(crate) fn first_user_text(body: &serde_json::Value) -> String {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(m) = msgs.iter().find(|m| m["role"] == "user") else { return String::new() };
    match &m["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(" ")
        }
        _ => String::new(),
    }
}

/// The text of a chat request's last user message (the current observation).
pub(crate) fn last_user_text(body: &serde_json::Value) -> String {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(m) = msgs.iter().rev().find(|m| m["role"] == "user") else { return String::new() };
    match &m["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(" ")
        }
        _ => String::new(),
    }
}

/// Images attached across a chat request.
pub(crate) fn image_count(body: &serde_json::Value) -> usize {
    body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["content"].as_array())
                .flatten()
                .filter(|p| p["type"] == "image_url")
                .count()
        })
        .unwrap_or(0)
}

/// The id of the first line of an accessibility-tree observation that has `role 'name'`.
pub(crate) fn id_of(tree: &str, role_name: &str) -> u32 {
    let line = tree
        .lines()
        .find(|l| l.contains(role_name))
        .unwrap_or_else(|| panic!("no {role_name:?} in the observation:\n{tree}"));
    let l = line.trim_start();
    l[1..l.find(']').unwrap()].parse().unwrap_or_else(|_| panic!("no id on {line:?}"))
}

/// A reply in WebArena's format: reasoning, then the action in a code span.
pub(crate) fn webarena_reply(action: &str) -> Reply {
    Reply::Text(format!(
        "Let's think step-by-step. In summary, the next action I will perform is ```{action}```"
    ))
}
