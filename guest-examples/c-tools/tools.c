// toolhost example tools in C, against the WIT world `plugin` (../../wit), with
// the bindings `wit-bindgen c` generates (plugin.h). `make guests` writes
// guest-examples/target/lang/c_tools.wasm.
//
// - word_stats: the tool every example language implements alike (see
//   guest-examples/word-stats); structured data with an output schema.
// - number_facts: a text part beside structured data.
//
// Ownership, as the generated code expects: the arguments passed in belong to
// the export, which frees them; everything put in `ret` is malloc'd, and the
// generated post-return function frees it once the host has read it.
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "plugin.h"

typedef toolhost_plugin_types_tool_result_t tool_result_t;
typedef toolhost_plugin_types_tool_descriptor_t tool_descriptor_t;

// Schemas and data list their keys in alphabetical order, as the Rust version's
// serde_json writes them, so the four versions are identical byte for byte.
static const char WORD_STATS_INPUT[] =
    "{\"additionalProperties\":false,"
    "\"properties\":{\"text\":{\"description\":\"The text to count\",\"type\":\"string\"}},"
    "\"required\":[\"text\"],\"type\":\"object\"}";
static const char WORD_STATS_OUTPUT[] =
    "{\"additionalProperties\":false,"
    "\"properties\":{\"characters\":{\"minimum\":0,\"type\":\"integer\"},"
    "\"lines\":{\"minimum\":0,\"type\":\"integer\"},"
    "\"words\":{\"minimum\":0,\"type\":\"integer\"}},"
    "\"required\":[\"characters\",\"lines\",\"words\"],\"type\":\"object\"}";

// |n| is bounded so that its square fits in a JSON number exactly.
static const char NUMBER_FACTS_INPUT[] =
    "{\"additionalProperties\":false,"
    "\"properties\":{\"n\":{\"maximum\":1000000,\"minimum\":-1000000,\"type\":\"integer\"}},"
    "\"required\":[\"n\"],\"type\":\"object\"}";
static const char NUMBER_FACTS_OUTPUT[] =
    "{\"properties\":{\"even\":{\"type\":\"boolean\"},\"n\":{\"type\":\"integer\"},"
    "\"square\":{\"type\":\"integer\"}},"
    "\"required\":[\"even\",\"n\",\"square\"],\"type\":\"object\"}";

static plugin_option_string_t some_string(const char *text) {
  plugin_option_string_t option = {.is_some = true};
  plugin_string_dup(&option.val, text);
  return option;
}

static void describe_tool(tool_descriptor_t *d, const char *name, const char *title,
                          const char *description, const char *input, const char *output) {
  memset(d, 0, sizeof *d);
  plugin_string_dup(&d->name, name);
  d->title = some_string(title);
  plugin_string_dup(&d->description, description);
  plugin_string_dup(&d->input_schema, input);
  d->output_schema.is_some = true;
  plugin_string_dup(&d->output_schema.val, output);
  d->annotations.is_some = true;
  d->annotations.val.read_only = (plugin_option_bool_t){.is_some = true, .val = true};
  // No required privileges or client capabilities: empty lists ({NULL, 0}).
}

void exports_toolhost_plugin_tool_describe(exports_toolhost_plugin_tool_list_tool_descriptor_t *ret) {
  ret->len = 2;
  ret->ptr = calloc(ret->len, sizeof *ret->ptr);
  if (!ret->ptr) abort();
  describe_tool(&ret->ptr[0], "word_stats", "Word statistics",
                "Counts the words, lines and characters of a text.", WORD_STATS_INPUT, WORD_STATS_OUTPUT);
  describe_tool(&ret->ptr[1], "number_facts", "Number facts",
                "Says whether an integer is even and what its square is, in words and as data.",
                NUMBER_FACTS_INPUT, NUMBER_FACTS_OUTPUT);
}

// A success whose data is the JSON text in `data` (taken over) and summary `summary`.
static void success(tool_result_t *ret, buf_t *data, buf_t *summary) {
  ret->outcome.tag = TOOLHOST_PLUGIN_TYPES_OUTCOME_SUCCESS;
  ret->outcome.val.success.is_some = true;
  ret->outcome.val.success.val = (plugin_string_t){(uint8_t *)data->data, data->len};
  ret->summary.is_some = true;
  ret->summary.val = (plugin_string_t){(uint8_t *)summary->data, summary->len};
  *data = (buf_t){0};
  *summary = (buf_t){0};
}

static void failure(tool_result_t *ret, toolhost_plugin_types_error_code_t code, const char *message,
                    buf_t *details) {
  ret->outcome.tag = TOOLHOST_PLUGIN_TYPES_OUTCOME_FAILURE;
  ret->outcome.val.failure.code = code;
  plugin_string_dup(&ret->outcome.val.failure.message, message);
  ret->outcome.val.failure.details.is_some = true;
  ret->outcome.val.failure.details.val = (plugin_string_t){(uint8_t *)details->data, details->len};
  *details = (buf_t){0};
}

// The arguments could not be read (the host validates them, so this is a bug).
static void bad_arguments(tool_result_t *ret, const char *field) {
  buf_t details = {0};
  buf_append_str(&details, "{\"field\":");
  buf_append_json_string(&details, field, strlen(field));
  buf_append_str(&details, "}");
  failure(ret, TOOLHOST_PLUGIN_TYPES_ERROR_CODE_INVALID_ARGUMENTS,
          "The arguments do not fit the input schema: check the field named in the details.", &details);
}

// `1 word`, `2 words`.
static void counted(buf_t *out, uint64_t n, const char *noun) {
  buf_printf(out, "%llu %s%s", (unsigned long long)n, noun, n == 1 ? "" : "s");
}

static bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void word_stats(const plugin_string_t *arguments, tool_result_t *ret) {
  buf_t text = {0};
  if (!json_member_string((const char *)arguments->ptr, arguments->len, "text", &text)) {
    bad_arguments(ret, "text");
    return;
  }
  // UTF-8: a character (code point) starts at every byte that is not a
  // continuation byte (10xxxxxx); ASCII whitespace never occurs inside one.
  uint64_t characters = 0, words = 0, lines = 0;
  bool in_word = false;
  for (size_t i = 0; i < text.len; i++) {
    unsigned char c = (unsigned char)text.data[i];
    if ((c & 0xC0) != 0x80) characters++;
    if (c == '\n') lines++;
    if (is_space(c)) {
      in_word = false;
    } else if (!in_word) {
      in_word = true;
      words++;
    }
  }
  if (text.len > 0 && text.data[text.len - 1] != '\n') lines++;
  free(text.data);

  buf_t data = {0}, summary = {0};
  buf_printf(&data, "{\"characters\":%llu,\"lines\":%llu,\"words\":%llu}", (unsigned long long)characters,
             (unsigned long long)lines, (unsigned long long)words);
  counted(&summary, words, "word");
  buf_append_str(&summary, ", ");
  counted(&summary, lines, "line");
  buf_append_str(&summary, ", ");
  counted(&summary, characters, "character");
  success(ret, &data, &summary);
}

static void number_facts(const plugin_string_t *arguments, tool_result_t *ret) {
  int64_t n;
  if (!json_member_integer((const char *)arguments->ptr, arguments->len, "n", &n)) {
    bad_arguments(ret, "n");
    return;
  }
  bool even = n % 2 == 0;
  long long square = (long long)n * (long long)n;
  buf_t data = {0}, summary = {0}, text = {0};
  buf_printf(&data, "{\"even\":%s,\"n\":%lld,\"square\":%lld}", even ? "true" : "false", (long long)n, square);
  buf_printf(&summary, "%lld is %s", (long long)n, even ? "even" : "odd");
  buf_printf(&text, "%lld is %s; its square is %lld.", (long long)n, even ? "even" : "odd", square);
  success(ret, &data, &summary);

  ret->content.len = 1;
  ret->content.ptr = calloc(1, sizeof *ret->content.ptr);
  if (!ret->content.ptr) abort();
  ret->content.ptr[0].tag = TOOLHOST_PLUGIN_TYPES_CONTENT_PART_TEXT;
  ret->content.ptr[0].val.text.text = (plugin_string_t){(uint8_t *)text.data, text.len};
  // mime: none (plain text), from calloc.
}

void exports_toolhost_plugin_tool_call(plugin_string_t *name, exports_toolhost_plugin_tool_json_t *arguments,
                                       exports_toolhost_plugin_tool_call_context_t *context,
                                       exports_toolhost_plugin_tool_tool_result_t *ret) {
  // No content parts, stored links or metadata unless a tool sets them.
  memset(ret, 0, sizeof *ret);
  if (name->len == strlen("word_stats") && memcmp(name->ptr, "word_stats", name->len) == 0) {
    word_stats(arguments, ret);
  } else if (name->len == strlen("number_facts") && memcmp(name->ptr, "number_facts", name->len) == 0) {
    number_facts(arguments, ret);
  } else {
    buf_t details = {0};
    buf_append_str(&details, "{\"tool\":");
    buf_append_json_string(&details, (const char *)name->ptr, name->len);
    buf_append_str(&details, "}");
    failure(ret, TOOLHOST_PLUGIN_TYPES_ERROR_CODE_INVALID_ARGUMENTS, "This plugin has no tool by that name.",
            &details);
  }
  plugin_string_free(name);
  exports_toolhost_plugin_tool_json_free(arguments);
  exports_toolhost_plugin_tool_call_context_free(context);
}
