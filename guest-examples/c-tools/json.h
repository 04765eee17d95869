// Just enough JSON for the C example tools: reading a member of the arguments
// object (already validated by the host against the tool's input schema) and
// writing JSON text into a growing buffer.
#ifndef TOOLHOST_C_JSON_H
#define TOOLHOST_C_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// A growing byte buffer; `data` is malloc'd (or NULL while empty).
typedef struct {
  char *data;
  size_t len;
  size_t cap;
} buf_t;

void buf_append(buf_t *buf, const char *bytes, size_t len);
void buf_append_str(buf_t *buf, const char *text);
// printf-style append.
void buf_printf(buf_t *buf, const char *format, ...) __attribute__((format(printf, 2, 3)));
// `text` as a JSON string literal, quotes included.
void buf_append_json_string(buf_t *buf, const char *text, size_t len);

// The string member `key` of the JSON object `json`, decoded to UTF-8 into `out`
// (which may hold NUL bytes: use out->len). False when there is no such string member
// or the JSON is malformed.
bool json_member_string(const char *json, size_t len, const char *key, buf_t *out);

// The integer member `key` of the JSON object `json`. False when there is no such
// member, or it is not an integer that fits in 64 bits.
bool json_member_integer(const char *json, size_t len, const char *key, int64_t *out);

#endif
