//! A deliberately small HTTP/1.1 server side: one request per connection, bodies framed by
//! `Content-Length` or `Transfer-Encoding: chunked`, every answer closes the connection.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// Longest accepted request line or header line.
const MAX_LINE: usize = 16 * 1024;
/// Most header lines accepted in one request.
const MAX_HEADERS: usize = 200;
/// Largest accepted request body.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// One parsed request.
#[derive(Debug)]
pub(crate) struct Request {
    /// Method as sent (`GET`, `POST`, ...).
    pub(crate) method: String,
    /// Request target as sent (path plus optional query).
    pub(crate) target: String,
    /// Header fields in arrival order, names lowercased, values trimmed.
    pub(crate) headers: Vec<(String, String)>,
    /// The decoded body (empty when there is none).
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (lowercase).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The target without its query string.
    pub(crate) fn path(&self) -> &str {
        self.target.split(['?', '#']).next().unwrap_or("")
    }
}

/// One answer.
#[derive(Debug)]
pub(crate) struct Response {
    /// Status code.
    pub(crate) status: u16,
    /// `Content-Type` header value, `None` for an empty body.
    pub(crate) content_type: Option<&'static str>,
    /// Body bytes.
    pub(crate) body: Vec<u8>,
}

impl Response {
    /// A `text/plain` answer.
    pub(crate) fn text(status: u16, body: &str) -> Self {
        Self {
            status,
            content_type: Some("text/plain; charset=utf-8"),
            body: body.as_bytes().to_vec(),
        }
    }

    /// An `application/json` answer.
    pub(crate) fn json(status: u16, value: &impl serde::Serialize) -> Self {
        Self {
            status,
            content_type: Some("application/json; charset=utf-8"),
            body: serde_json::to_vec(value).expect("receiver types serialize"),
        }
    }

    /// An answer without a body.
    pub(crate) fn empty(status: u16) -> Self {
        Self {
            status,
            content_type: None,
            body: Vec::new(),
        }
    }
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_owned())
}

/// Reads one line ending in `\n`, without the line ending. `None` at a clean end of stream.
fn read_line(reader: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let read = reader
        .by_ref()
        .take(MAX_LINE as u64 + 2)
        .read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        return Err(invalid("header line too long or truncated"));
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| invalid("header line is not UTF-8"))
}

/// Reads one request from `stream`. `Ok(None)` when the peer closed before sending anything.
pub(crate) fn read_request(stream: &TcpStream) -> io::Result<Option<Request>> {
    let mut reader = BufReader::new(stream);
    let request_line = loop {
        match read_line(&mut reader)? {
            None => return Ok(None),
            // Tolerate stray empty lines before the request line (RFC 9112 §2.2).
            Some(line) if line.is_empty() => {}
            Some(line) => break line,
        }
    };
    let mut parts = request_line.split_ascii_whitespace();
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(invalid("unsupported HTTP version"));
    }

    let mut headers = Vec::new();
    loop {
        let line = read_line(&mut reader)?.ok_or_else(|| invalid("end of stream in headers"))?;
        if line.is_empty() {
            break;
        }
        if headers.len() >= MAX_HEADERS {
            return Err(invalid("too many header lines"));
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| invalid("header line without a colon"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body: Vec::new(),
    };

    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        let mut writer = stream;
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }

    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        request.body = read_chunked(&mut reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length
            .parse()
            .map_err(|_| invalid("invalid Content-Length"))?;
        if length > MAX_BODY {
            return Err(invalid("body too large"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(Some(request))
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(reader)?.ok_or_else(|| invalid("end of stream in chunk size"))?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size =
            usize::from_str_radix(size, 16).map_err(|_| invalid("invalid chunk size line"))?;
        if size == 0 {
            // Trailer fields, then the final empty line.
            while read_line(reader)?.is_some_and(|l| !l.is_empty()) {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(invalid("body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" {
            return Err(invalid("chunk not followed by CRLF"));
        }
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        410 => "Gone",
        500 => "Internal Server Error",
        _ => "Unknown",
    }
}

/// Writes `response` with `Connection: close`.
pub(crate) fn write_response(mut stream: &TcpStream, response: &Response) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        response.status,
        reason_phrase(response.status),
        response.body.len()
    );
    if let Some(content_type) = response.content_type {
        head.push_str("Content-Type: ");
        head.push_str(content_type);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&response.body);
    stream.write_all(&bytes)?;
    stream.flush()
}

/// Decodes `%XX` escapes in one path segment (invalid escapes stay as they are).
pub(crate) fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && hex.iter().all(u8::is_ascii_hexdigit)
            && let Ok(hex) = std::str::from_utf8(hex)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b"), "a b");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
        assert_eq!(percent_decode("%+1"), "%+1");
        assert_eq!(percent_decode("plain"), "plain");
    }
}
