//! A small WebDriver client (the W3C protocol over HTTP/1.1 to chromedriver on loopback), enough
//! for the browser tests: sessions, navigation, elements, scripts, pointer and key actions,
//! screenshots and chromedriver's logs. Only std and serde_json: no async runtime for the tests.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// One HTTP exchange with chromedriver: (status, JSON body).
fn http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> std::io::Result<(u16, Value)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    let payload = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    )?;
    let mut r = BufReader::new(s);
    let mut status = String::new();
    r.read_line(&mut status)?;
    let code: u16 = status
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (mut len, mut chunked) = (None, false);
    loop {
        let mut line = String::new();
        r.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            len = v.trim().parse::<usize>().ok();
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let bytes = if chunked {
        read_chunked(&mut r)?
    } else if let Some(n) = len {
        let mut b = vec![0; n];
        r.read_exact(&mut b)?;
        b
    } else {
        let mut b = Vec::new();
        r.read_to_end(&mut b)?;
        b
    };
    Ok((code, serde_json::from_slice(&bytes).unwrap_or(Value::Null)))
}

fn read_chunked(r: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let mut size = String::new();
        r.read_line(&mut size)?;
        let n =
            usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        if n == 0 {
            return Ok(out);
        }
        let mut b = vec![0; n + 2];
        r.read_exact(&mut b)?;
        out.extend_from_slice(&b[..n]);
    }
}

/// A WebDriver session on a running chromedriver.
pub struct Session {
    port: u16,
    id: String,
}

impl Session {
    /// Waits for chromedriver on `port`, then opens a session with these capabilities.
    pub fn start(port: u16, capabilities: Value) -> Session {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match http(port, "GET", "/status", None) {
                Ok((200, v)) if v["value"]["ready"] == json!(true) => break,
                _ if Instant::now() > deadline => {
                    panic!("chromedriver did not get ready on port {port}")
                }
                _ => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        let (code, v) = http(
            port,
            "POST",
            "/session",
            Some(&json!({"capabilities": {"alwaysMatch": capabilities}})),
        )
        .expect("POST /session to chromedriver");
        let id = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session ({code}): {v}"));
        Session {
            port,
            id: id.to_string(),
        }
    }

    /// A command of this session; panics with WebDriver's words on an error.
    pub fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.try_cmd(method, path, body)
            .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"))
    }

    pub fn try_cmd(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        let full = format!("/session/{}{path}", self.id);
        let body = body.or_else(|| (method == "POST").then(|| json!({})));
        let (code, v) = http(self.port, method, &full, body.as_ref()).map_err(|e| e.to_string())?;
        if code != 200 {
            return Err(format!(
                "{code}: {} {}",
                v["value"]["error"], v["value"]["message"]
            ));
        }
        Ok(v["value"].clone())
    }

    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    pub fn url(&self) -> String {
        self.cmd("GET", "/url", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Runs a script (its body; `arguments` as usual) and returns its value.
    pub fn js(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// Runs an async script: its last argument is the callback.
    pub fn js_async(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/async",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// The first element matching a CSS selector, as a WebDriver element reference.
    pub fn find(&self, css: &str) -> Option<Value> {
        let v = self
            .try_cmd(
                "POST",
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .ok()?;
        Some(v)
    }

    pub fn click(&self, css: &str) {
        let e = self.wait_for(css);
        let id = element_id(&e);
        self.cmd("POST", &format!("/element/{id}/click"), None);
    }

    /// Types `text` into the element matching `css` ("\n" submits a form).
    pub fn type_into(&self, css: &str, text: &str) {
        let e = self.wait_for(css);
        let id = element_id(&e);
        self.cmd(
            "POST",
            &format!("/element/{id}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// Presses the left button at (x0, y0), moves to (x1, y1) in steps, releases: a drag.
    pub fn drag(&self, (x0, y0): (f64, f64), (x1, y1): (f64, f64)) {
        let mut steps = vec![
            json!({"type": "pointerMove", "duration": 0, "origin": "viewport", "x": x0.round() as i64, "y": y0.round() as i64}),
            json!({"type": "pointerDown", "button": 0}),
        ];
        for i in 1..=5 {
            let t = f64::from(i) / 5.0;
            steps.push(json!({"type": "pointerMove", "duration": 30, "origin": "viewport",
                "x": (x0 + (x1 - x0) * t).round() as i64, "y": (y0 + (y1 - y0) * t).round() as i64}));
        }
        steps.push(json!({"type": "pointerUp", "button": 0}));
        let actions = json!({"actions": [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": steps}]});
        self.cmd("POST", "/actions", Some(actions));
        self.cmd("DELETE", "/actions", None);
    }

    pub fn text(&self, css: &str) -> String {
        let e = self.wait_for(css);
        let id = element_id(&e);
        self.cmd("GET", &format!("/element/{id}/text"), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Waits (10 s) for an element matching `css`.
    pub fn wait_for(&self, css: &str) -> Value {
        let mut last = None;
        self.wait(&format!("an element {css}"), || {
            last = self.find(css);
            last.is_some()
        });
        last.expect("found")
    }

    /// Waits (10 s) until `f` holds; panics naming `what` otherwise.
    pub fn wait(&self, what: &str, mut f: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !f() {
            if Instant::now() > deadline {
                let page = self.js(
                    "return document.body ? document.body.innerText.slice(0, 1500) : ''",
                    json!([]),
                );
                let console: Vec<String> = self
                    .log("browser")
                    .iter()
                    .map(|e| e["message"].as_str().unwrap_or("").to_string())
                    .collect();
                panic!(
                    "timed out waiting for {what} at {}; the page reads:\n{}\nconsole: {console:?}",
                    self.url(),
                    page.as_str().unwrap_or("")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Moves the mouse to the viewport point (x, y), then presses and releases the left button.
    pub fn click_at(&self, x: f64, y: f64) {
        let actions = json!({"actions": [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
            {"type": "pointerMove", "duration": 0, "origin": "viewport", "x": x.round() as i64, "y": y.round() as i64},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0}
        ]}]});
        self.cmd("POST", "/actions", Some(actions));
        self.cmd("DELETE", "/actions", None);
    }

    /// Moves the mouse to the viewport point (x, y) (hover).
    pub fn hover_at(&self, x: f64, y: f64) {
        let actions = json!({"actions": [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": [
            {"type": "pointerMove", "duration": 0, "origin": "viewport", "x": x.round() as i64, "y": y.round() as i64}
        ]}]});
        self.cmd("POST", "/actions", Some(actions));
    }

    /// Presses and releases one key (a WebDriver key code such as "\u{E014}", ArrowRight).
    pub fn key(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}
        ]}]});
        self.cmd("POST", "/actions", Some(actions));
        self.cmd("DELETE", "/actions", None);
    }

    /// The page as a PNG.
    pub fn screenshot(&self) -> Vec<u8> {
        let b64 = self.cmd("GET", "/screenshot", None);
        base64_decode(b64.as_str().expect("a base64 string"))
    }

    /// chromedriver's log of a type ("performance", "browser"); each read empties it.
    pub fn log(&self, kind: &str) -> Vec<Value> {
        match self.cmd("POST", "/se/log", Some(json!({ "type": kind }))) {
            Value::Array(v) => v,
            _ => Vec::new(),
        }
    }

    pub fn quit(&self) {
        let _ = http(self.port, "DELETE", &format!("/session/{}", self.id), None);
    }
}

pub fn element_id(e: &Value) -> String {
    e["element-6066-11e4-a52e-4f735466cecf"]
        .as_str()
        .unwrap_or_else(|| panic!("not an element reference: {e}"))
        .to_string()
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &c)| {
            acc | (u32::from(val(c)) << (18 - 6 * i))
        });
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}
