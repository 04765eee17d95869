//! `web`: tools that reach the web through the host's `wasi:http`, as far as
//! the operator's `http` rules allow. The same two tools exist in JavaScript
//! (`js-web`) and Python (`py-web`).
//!
//! - `fetch_title`: fetches a page and returns its status, `<title>` and links.
//! - `call_api`: a `GET` with `Authorization: Bearer <secret "api">` and
//!   `Accept: application/json`; returns the status and the body, parsed when
//!   it is JSON. The tool only ever holds the secret's placeholder: the host
//!   puts the value in the header for the hosts the secret allows.

use serde::Deserialize;
use toolhost_guest::{
    CallContext, ErrorCode, Plugin, ToolDescriptor, ToolResult, Value, http, json, secret,
    with_args,
};

struct Web;

#[derive(Deserialize)]
struct Url {
    url: String,
}

/// At most this many links are returned.
const MAX_LINKS: usize = 100;

fn failed(url: &str, error: http::Error) -> ToolResult {
    ToolResult::failure(ErrorCode::ToolError, format!("GET {url} failed: {error}"))
        .details(json!({"code": error.code(), "url": url}))
        .build()
}

fn fetch_title(Url { url }: Url) -> ToolResult {
    let response = match http::Request::get(&url)
        .header("accept", "text/html")
        .send()
    {
        Ok(response) => response,
        Err(e) => return failed(&url, e),
    };
    let page = response.text();
    let title = html::title(&page);
    let links: Vec<Value> = html::links(&page)
        .into_iter()
        .take(MAX_LINKS)
        .map(|(href, text)| json!({"href": href, "text": text}))
        .collect();
    let summary = match &title {
        Some(title) => format!("{} {url}: {title}", response.status),
        None => format!("{} {url} (no title)", response.status),
    };
    ToolResult::success(json!({
        "url": url,
        "status": response.status,
        "title": title,
        "links": links,
    }))
    .summary(summary)
    .build()
}

fn call_api(Url { url }: Url) -> ToolResult {
    let mut request = http::Request::get(&url).header("accept", "application/json");
    // Without the secret configured, the request goes without credentials.
    if let Some(token) = secret("api") {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = match request.send() {
        Ok(response) => response,
        Err(e) => return failed(&url, e),
    };
    let body = response
        .json::<Value>()
        .unwrap_or_else(|_| Value::String(response.text()));
    ToolResult::success(json!({"status": response.status, "body": body}))
        .summary(format!("GET {url} -> {}", response.status))
        .build()
}

impl Plugin for Web {
    fn describe() -> Vec<ToolDescriptor> {
        let url = json!({
            "type": "object",
            "properties": {"url": {"type": "string", "description": "An http or https URL"}},
            "required": ["url"],
            "additionalProperties": false,
        });
        vec![
            ToolDescriptor::new(
                "fetch_title",
                "Fetches a web page and returns its HTTP status, its title and its links.",
            )
            .title("Fetch a page's title")
            .input_schema(url.clone())
            .output_schema(json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string"},
                    "status": {"type": "integer"},
                    "title": {"type": ["string", "null"]},
                    "links": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"href": {"type": "string"}, "text": {"type": "string"}},
                            "required": ["href", "text"],
                        },
                    },
                },
                "required": ["url", "status", "title", "links"],
            }))
            .read_only(true)
            .open_world(true)
            .build(),
            ToolDescriptor::new(
                "call_api",
                "Calls a JSON API with GET, authenticated by the operator's secret `api`; \
                 returns the status and the body (parsed when it is JSON).",
            )
            .title("Call an API")
            .input_schema(url)
            .output_schema(json!({
                "type": "object",
                "properties": {"status": {"type": "integer"}, "body": {}},
                "required": ["status", "body"],
            }))
            .read_only(true)
            .open_world(true)
            .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "fetch_title" => with_args(&arguments, fetch_title),
            "call_api" => with_args(&arguments, call_api),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Web);

/// Just enough HTML for a title and links: no tree, no scripts, no charsets
/// other than UTF-8. Tag and attribute names match in any case.
mod html {
    /// The text of the first `<title>`, entities decoded and white space
    /// collapsed; `None` without one (or when it is empty).
    pub fn title(page: &str) -> Option<String> {
        let lower = page.to_ascii_lowercase();
        let (_, start) = find_tag(&lower, "title", 0)?;
        let end = lower[start..]
            .find("</title")
            .map_or(page.len(), |i| start + i);
        let title = text(&page[start..end]);
        (!title.is_empty()).then_some(title)
    }

    /// Every `<a href=...>` in order: the `href` as written (entities
    /// decoded) and the link's text without its tags.
    pub fn links(page: &str) -> Vec<(String, String)> {
        let lower = page.to_ascii_lowercase();
        let mut links = Vec::new();
        let mut at = 0;
        while let Some((tag, content)) = find_tag(&lower, "a", at) {
            let end = lower[content..]
                .find("</a")
                .map_or(page.len(), |i| content + i);
            if let Some(href) = attribute(&page[tag..content], "href") {
                links.push((decode(&href), text(&page[content..end])));
            }
            at = end;
        }
        links
    }

    /// The next start tag `<name ...>` at or after `from` in `lower` (the page
    /// in lower case): where its attributes start and where its content
    /// starts (after the `>`).
    fn find_tag(lower: &str, name: &str, from: usize) -> Option<(usize, usize)> {
        let open = format!("<{name}");
        let mut at = from;
        loop {
            let start = at + lower[at..].find(&open)?;
            let after = start + open.len();
            match lower.as_bytes().get(after) {
                Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/') => {
                    let close = after + lower[after..].find('>')?;
                    return Some((after, close + 1));
                }
                _ => at = after,
            }
        }
    }

    /// The value of attribute `name` in a tag's attribute text (quoted with
    /// `"` or `'`, or bare).
    fn attribute(attributes: &str, name: &str) -> Option<String> {
        let bytes = attributes.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
                i += 1;
            }
            let key_start = i;
            while i < bytes.len() && !b"= \t\n\r\x0c>/".contains(&bytes[i]) {
                i += 1;
            }
            let key = &attributes[key_start..i];
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            let mut value = "";
            if bytes.get(i) == Some(&b'=') {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                match bytes.get(i) {
                    Some(&quote @ (b'"' | b'\'')) => {
                        let end = attributes[i + 1..]
                            .find(quote as char)
                            .map_or(bytes.len(), |e| i + 1 + e);
                        value = &attributes[i + 1..end];
                        i = end + 1;
                    }
                    _ => {
                        let start = i;
                        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>'
                        {
                            i += 1;
                        }
                        value = &attributes[start..i];
                    }
                }
            }
            if key.eq_ignore_ascii_case(name) {
                return Some(value.to_owned());
            }
            if key.is_empty() {
                i += 1;
            }
        }
        None
    }

    /// Text content: tags dropped, entities decoded, white space collapsed.
    fn text(html: &str) -> String {
        let mut plain = String::with_capacity(html.len());
        let mut rest = html;
        while let Some(open) = rest.find('<') {
            plain.push_str(&rest[..open]);
            plain.push(' ');
            rest = rest[open..]
                .find('>')
                .map_or("", |close| &rest[open + close + 1..]);
        }
        plain.push_str(rest);
        decode(&plain)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Decodes `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;` and
    /// numeric character references; leaves any other `&` as it is.
    fn decode(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(amp) = rest.find('&') {
            out.push_str(&rest[..amp]);
            rest = &rest[amp..];
            let entity = rest[1..]
                .find(';')
                .filter(|&end| end <= 10)
                .map(|end| &rest[1..=end]);
            let decoded = entity.and_then(|name| match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some('\u{a0}'),
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            });
            match (entity, decoded) {
                (Some(name), Some(c)) => {
                    out.push(c);
                    rest = &rest[name.len() + 2..];
                }
                _ => {
                    out.push('&');
                    rest = &rest[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn title_and_links() {
            let page = "<html><HEAD><Title>\n A &amp; B </title></head><body>\
                        <a class=x href=\"/one?a=1&amp;b=2\">One <b>link</b></a>\
                        <abbr>no</abbr><a name=top>anchor</a>\
                        <A HREF='https://example.org/'>Two</A></body>";
            assert_eq!(title(page).as_deref(), Some("A & B"));
            assert_eq!(
                links(page),
                vec![
                    ("/one?a=1&b=2".to_owned(), "One link".to_owned()),
                    ("https://example.org/".to_owned(), "Two".to_owned()),
                ]
            );
            assert_eq!(title("<p>none</p>"), None);
            assert_eq!(decode("&#65;&#x42;&bogus; & x"), "AB&bogus; & x");
        }
    }
}
