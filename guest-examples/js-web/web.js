// toolhost's web tools in JavaScript, against the WIT world `plugin`
// (../../wit), the same two as the Rust example (../web) and the Python one
// (../py-web). componentize-js (SpiderMonkey) builds this module with its
// `http` feature, so `fetch` goes out through the host's wasi:http, as far as
// the operator's `http` rules allow: `make guests` writes
// guest-examples/target/lang/js_web.wasm.
//
// - fetch_title: fetches a page and returns its status, <title> and links.
// - call_api: a GET with `Authorization: Bearer <secret "api">` and
//   `Accept: application/json`; returns the status and the body, parsed when
//   it is JSON. The module only ever holds the secret's placeholder: the host
//   puts the value in the header for the hosts the secret allows.

import { getConfig } from 'toolhost:plugin/host@0.2.0';

// At most this many links are returned.
const MAX_LINKS = 100;

const URL_ARGS = {
  additionalProperties: false,
  properties: { url: { description: 'An http or https URL', type: 'string' } },
  required: ['url'],
  type: 'object',
};

const FETCH_TITLE = {
  name: 'fetch_title',
  title: "Fetch a page's title",
  description: 'Fetches a web page and returns its HTTP status, its title and its links.',
  inputSchema: URL_ARGS,
  outputSchema: {
    properties: {
      links: {
        items: {
          properties: { href: { type: 'string' }, text: { type: 'string' } },
          required: ['href', 'text'],
          type: 'object',
        },
        type: 'array',
      },
      status: { type: 'integer' },
      title: { type: ['string', 'null'] },
      url: { type: 'string' },
    },
    required: ['url', 'status', 'title', 'links'],
    type: 'object',
  },
};

const CALL_API = {
  name: 'call_api',
  title: 'Call an API',
  description:
    'Calls a JSON API with GET, authenticated by the operator\'s secret `api`; ' +
    'returns the status and the body (parsed when it is JSON).',
  inputSchema: URL_ARGS,
  outputSchema: {
    properties: { body: {}, status: { type: 'integer' } },
    required: ['status', 'body'],
    type: 'object',
  },
};

function descriptor(tool) {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: JSON.stringify(tool.inputSchema),
    outputSchema: JSON.stringify(tool.outputSchema),
    annotations: { readOnly: true, destructive: undefined, idempotent: undefined, openWorld: true },
    requiredPrivileges: [],
    requiredClientCapabilities: [],
  };
}

function result(outcome, summary) {
  return {
    outcome,
    summary,
    content: [],
    storedLinks: [],
    metadata: {
      pagination: undefined,
      dryRun: undefined,
      responseSize: undefined,
      query: undefined,
      generatedAt: undefined,
      expiresAt: undefined,
      extensions: [],
    },
  };
}

function success(data, summary) {
  return result({ tag: 'success', val: JSON.stringify(data) }, summary);
}

function failure(code, message, details) {
  return result({ tag: 'failure', val: { code, message, details: JSON.stringify(details) } }, undefined);
}

// A failed fetch: SpiderMonkey's fetch rejects with a TypeError whose message
// may not name the wasi:http error code, so the message is passed on as is.
function failed(url, error) {
  const message = error instanceof Error ? error.message : String(error);
  return failure('tool-error', `GET ${url} failed: ${message}`, { error: message, url });
}

// `redirect: 'manual'`: the host follows no redirect, and the tool reports a
// 3xx as it came rather than following it itself.
async function get(url, headers) {
  return fetch(url, { headers, redirect: 'manual' });
}

// Just enough HTML for a title and links, as the Rust version reads it: tag
// and attribute names in any case, tags dropped from text, entities decoded,
// white space collapsed.
const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decode(text) {
  return text.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, name) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
    }
    return Object.hasOwn(ENTITIES, name) ? ENTITIES[name] : whole;
  });
}

function textOf(html) {
  return decode(html.replace(/<[^>]*>?/g, ' '))
    .split(/[ \t\n\f\r]+/)
    .filter(Boolean)
    .join(' ');
}

function title(page) {
  const match = /<title(?:[\s/][^>]*)?>([\s\S]*?)(?:<\/title|$)/i.exec(page);
  const text = match ? textOf(match[1]) : '';
  return text === '' ? null : text;
}

const ANCHOR = /<a(?:[\s/]([^>]*))?>([\s\S]*?)(?:<\/a|$)/gi;
const HREF = /(?:^|[\s/])href\s*=\s*(?:"([^"]*)"?|'([^']*)'?|([^\s>]*))/i;

function links(page) {
  const found = [];
  for (const [, attributes = '', content] of page.matchAll(ANCHOR)) {
    const href = HREF.exec(attributes);
    if (href) found.push({ href: decode(href[1] ?? href[2] ?? href[3]), text: textOf(content) });
  }
  return found;
}

async function fetchTitle({ url }) {
  let response;
  let page;
  try {
    response = await get(url, { accept: 'text/html' });
    page = await response.text();
  } catch (error) {
    return failed(url, error);
  }
  const found = title(page);
  const summary = found === null ? `${response.status} ${url} (no title)` : `${response.status} ${url}: ${found}`;
  return success({ url, status: response.status, title: found, links: links(page).slice(0, MAX_LINKS) }, summary);
}

async function callApi({ url }) {
  const headers = { accept: 'application/json' };
  // Without the secret configured, the request goes without credentials.
  const token = getConfig('secret:api');
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  let response;
  let text;
  try {
    response = await get(url, headers);
    text = await response.text();
  } catch (error) {
    return failed(url, error);
  }
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return success({ status: response.status, body }, `GET ${url} -> ${response.status}`);
}

const TOOLS = { fetch_title: fetchTitle, call_api: callApi };

export const tool = {
  describe() {
    return [FETCH_TITLE, CALL_API].map(descriptor);
  },

  // componentize-js runs the event loop until the returned promise settles.
  async call(name, args, _context) {
    const run = Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
    if (run === undefined) {
      return failure('invalid-arguments', `This plugin has no tool named \`${name}\`.`, { tool: name });
    }
    return run(JSON.parse(args));
  },
};
