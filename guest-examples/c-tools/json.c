// Just enough JSON for the C example tools (see json.h): a reader that walks one
// object's members and skips any value, and a writer of string literals.
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_append(buf_t *buf, const char *bytes, size_t len) {
  if (buf->len + len + 1 > buf->cap) {
    size_t cap = buf->cap ? buf->cap : 64;
    while (buf->len + len + 1 > cap) cap *= 2;
    buf->data = realloc(buf->data, cap);
    if (!buf->data) abort();
    buf->cap = cap;
  }
  memcpy(buf->data + buf->len, bytes, len);
  buf->len += len;
  buf->data[buf->len] = '\0';
}

void buf_append_str(buf_t *buf, const char *text) { buf_append(buf, text, strlen(text)); }

void buf_printf(buf_t *buf, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int needed = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (needed < 0) abort();
  char *text = malloc((size_t)needed + 1);
  if (!text) abort();
  va_start(args, format);
  vsnprintf(text, (size_t)needed + 1, format, args);
  va_end(args);
  buf_append(buf, text, (size_t)needed);
  free(text);
}

void buf_append_json_string(buf_t *buf, const char *text, size_t len) {
  buf_append(buf, "\"", 1);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)text[i];
    switch (c) {
      case '"': buf_append(buf, "\\\"", 2); break;
      case '\\': buf_append(buf, "\\\\", 2); break;
      case '\n': buf_append(buf, "\\n", 2); break;
      case '\r': buf_append(buf, "\\r", 2); break;
      case '\t': buf_append(buf, "\\t", 2); break;
      default:
        if (c < 0x20) {
          buf_printf(buf, "\\u%04x", c);
        } else {
          buf_append(buf, (const char *)&c, 1);
        }
    }
  }
  buf_append(buf, "\"", 1);
}

// A position in the JSON text.
typedef struct {
  const char *p;
  const char *end;
} cursor_t;

static void skip_ws(cursor_t *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool eat(cursor_t *c, char expected) {
  skip_ws(c);
  if (c->p < c->end && *c->p == expected) {
    c->p++;
    return true;
  }
  return false;
}

static int hex_digit(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

// Four hex digits after `\u`.
static bool read_hex4(cursor_t *c, uint32_t *out) {
  if (c->end - c->p < 4) return false;
  uint32_t value = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(c->p[i]);
    if (d < 0) return false;
    value = value * 16 + (uint32_t)d;
  }
  c->p += 4;
  *out = value;
  return true;
}

static void append_utf8(buf_t *out, uint32_t cp) {
  char bytes[4];
  size_t n;
  if (cp < 0x80) {
    bytes[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    bytes[0] = (char)(0xC0 | (cp >> 6));
    bytes[1] = (char)(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    bytes[0] = (char)(0xE0 | (cp >> 12));
    bytes[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    bytes[2] = (char)(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    bytes[0] = (char)(0xF0 | (cp >> 18));
    bytes[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    bytes[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    bytes[3] = (char)(0x80 | (cp & 0x3F));
    n = 4;
  }
  buf_append(out, bytes, n);
}

// A string literal at the cursor, decoded into `out` (NULL: only skipped).
static bool read_string(cursor_t *c, buf_t *out) {
  if (!eat(c, '"')) return false;
  while (c->p < c->end) {
    char ch = *c->p++;
    if (ch == '"') return true;
    if (ch != '\\') {
      if (out) buf_append(out, &ch, 1);
      continue;
    }
    if (c->p >= c->end) return false;
    char escape = *c->p++;
    const char *simple = NULL;
    switch (escape) {
      case '"': simple = "\""; break;
      case '\\': simple = "\\"; break;
      case '/': simple = "/"; break;
      case 'b': simple = "\b"; break;
      case 'f': simple = "\f"; break;
      case 'n': simple = "\n"; break;
      case 'r': simple = "\r"; break;
      case 't': simple = "\t"; break;
      case 'u': {
        uint32_t cp;
        if (!read_hex4(c, &cp)) return false;
        // A UTF-16 surrogate pair stands for one code point above U+FFFF.
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t low;
          if (c->end - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u') return false;
          c->p += 2;
          if (!read_hex4(c, &low) || low < 0xDC00 || low > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        }
        if (out) append_utf8(out, cp);
        continue;
      }
      default: return false;
    }
    if (out) buf_append(out, simple, 1);
  }
  return false;
}

static bool skip_value(cursor_t *c, int depth);

// The members of an object or the items of an array, after the opening bracket.
static bool skip_container(cursor_t *c, char close, bool object, int depth) {
  if (eat(c, close)) return true;
  do {
    if (object && (!read_string(c, NULL) || !eat(c, ':'))) return false;
    if (!skip_value(c, depth + 1)) return false;
  } while (eat(c, ','));
  return eat(c, close);
}

static bool skip_value(cursor_t *c, int depth) {
  if (depth > 64) return false;
  skip_ws(c);
  if (c->p >= c->end) return false;
  switch (*c->p) {
    case '"': return read_string(c, NULL);
    case '{': c->p++; return skip_container(c, '}', true, depth);
    case '[': c->p++; return skip_container(c, ']', false, depth);
    default:
      // A number or a literal: everything up to the next delimiter.
      while (c->p < c->end && !strchr(",]} \t\r\n", *c->p)) c->p++;
      return true;
  }
}

// Moves the cursor to the value of the member `key` of the object at the cursor.
static bool find_member(cursor_t *c, const char *key) {
  if (!eat(c, '{') || eat(c, '}')) return false;
  buf_t name = {0};
  bool found = false;
  do {
    name.len = 0;
    if (!read_string(c, &name) || !eat(c, ':')) break;
    if (name.len == strlen(key) && memcmp(name.data, key, name.len) == 0) {
      skip_ws(c);
      found = true;
      break;
    }
    if (!skip_value(c, 1)) break;
  } while (eat(c, ','));
  free(name.data);
  return found;
}

bool json_member_string(const char *json, size_t len, const char *key, buf_t *out) {
  cursor_t c = {json, json + len};
  return find_member(&c, key) && read_string(&c, out);
}

bool json_member_integer(const char *json, size_t len, const char *key, int64_t *out) {
  cursor_t c = {json, json + len};
  if (!find_member(&c, key)) return false;
  const char *start = c.p;
  while (c.p < c.end && strchr("+-.0123456789eE", *c.p)) c.p++;
  char digits[64];
  size_t n = (size_t)(c.p - start);
  if (n == 0 || n >= sizeof digits) return false;
  memcpy(digits, start, n);
  digits[n] = '\0';
  // JSON Schema's `integer` admits 3.0 as well as 3.
  char *rest;
  double value = strtod(digits, &rest);
  if (*rest || value != value || value < -9007199254740992.0 || value > 9007199254740992.0 ||
      (double)(int64_t)value != value)
    return false;
  *out = (int64_t)value;
  return true;
}
