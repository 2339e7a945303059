//! A web server for `web_fetch` and `web_search` tests (unit tests here, the binary's
//! tests through `#[path]` in `tests/all/main.rs`): 127.0.0.1 only, fixed answers by path, every request's head recorded. It
//! uses the standard library alone so both test crates can include it.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// One fixed answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// A 200 with this content type and body.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    /// A 302 to `location`.
    pub fn redirect(location: &str) -> Answer {
        Answer {
            status: 302,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
        }
    }
}

/// The running server; it stops with the test process.
pub struct WebServer {
    /// Where it listens.
    pub addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl WebServer {
    /// Starts a server answering `routes` (path → answer); other paths get a 404.
    pub fn start(routes: Vec<(&str, Answer)>) -> WebServer {
        WebServer::start_on("127.0.0.1:0", routes)
    }

    /// [`WebServer::start`] listening on `addr` (a loopback address and port).
    pub fn start_on(addr: &str, routes: Vec<(&str, Answer)>) -> WebServer {
        let listener = TcpListener::bind(addr).unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Vec<(String, Answer)>> = Arc::new(
            routes
                .into_iter()
                .map(|(p, a)| (p.to_string(), a))
                .collect(),
        );
        let heads = Arc::new(Mutex::new(Vec::new()));
        let recorded = heads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let routes = routes.clone();
                let recorded = recorded.clone();
                std::thread::spawn(move || answer(stream, &routes, &recorded));
            }
        });
        WebServer { addr, heads }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The heads of the requests received so far (request line and headers).
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

fn answer(stream: TcpStream, routes: &[(String, Answer)], heads: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let end = line == "\r\n" || line == "\n";
        head.push_str(&line);
        if end {
            break;
        }
    }
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    heads.lock().unwrap().push(head);
    let not_found = Answer {
        status: 404,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        body: b"not found".to_vec(),
    };
    let found = routes
        .iter()
        .find(|(p, _)| *p == path)
        .map_or(&not_found, |(_, a)| a);
    let mut out = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        found.status,
        found.body.len()
    );
    for (name, value) in &found.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut stream = reader.into_inner();
    // The client may stop reading early (a capped body): errors end the answer.
    let _ = stream.write_all(out.as_bytes());
    for piece in found.body.chunks(64 * 1024) {
        if stream.write_all(piece).is_err() {
            return;
        }
    }
    let _ = stream.flush();
}
