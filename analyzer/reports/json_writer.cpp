// The escaping follows nlohmann's serializer (nlohmann/detail/output/serializer.hpp,
// dump_escaped) so that a document written here reads exactly like one dumped
// from a DOM; tests/unit/analyzer/json_writer_test.cpp compares the two.
#include "reports/json_writer.h"

#include <charconv>

namespace memrec::analyzer {
namespace {

unsigned char byte_at(std::string_view text, std::size_t i) { return static_cast<unsigned char>(text[i]); }

bool plain_ascii(unsigned char b) { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\'; }

// The UTF-8 sequence starting at text[i] (a byte >= 0x80): its length if it
// is well-formed (Unicode 15 Table 3-7), else the length of its maximal
// valid prefix, at least 1.
struct Utf8Step {
  std::size_t length;
  bool valid;
};
Utf8Step utf8_step(std::string_view text, std::size_t i) {
  const unsigned char lead = byte_at(text, i);
  std::size_t continuations = 0;
  unsigned char low = 0x80;  // the range of the first continuation byte
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    continuations = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    continuations = 2;
    if (lead == 0xE0) low = 0xA0;   // not overlong
    if (lead == 0xED) high = 0x9F;  // not a surrogate
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    continuations = 3;
    if (lead == 0xF0) low = 0x90;   // not overlong
    if (lead == 0xF4) high = 0x8F;  // not above U+10FFFF
  } else {
    return {1, false};  // a continuation byte, C0/C1 (always overlong) or F5..FF
  }
  for (std::size_t n = 1; n <= continuations; ++n) {
    if (i + n >= text.size() || byte_at(text, i + n) < low || byte_at(text, i + n) > high) return {n, false};
    low = 0x80;
    high = 0xBF;
  }
  return {continuations + 1, true};
}

void append_escaped_ascii(std::string& out, unsigned char b) {
  switch (b) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\t':
      out += "\\t";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\r':
      out += "\\r";
      return;
    default: {
      constexpr char kHex[] = "0123456789abcdef";  // nlohmann writes \u%04x: lower case
      out += "\\u00";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xf]);
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t run = i;
    while (run < text.size() && plain_ascii(byte_at(text, run))) ++run;
    out.append(text.substr(i, run - i));
    i = run;
    if (i == text.size()) break;
    const unsigned char b = byte_at(text, i);
    if (b < 0x80) {
      append_escaped_ascii(out, b);
      ++i;
      continue;
    }
    const Utf8Step step = utf8_step(text, i);
    if (step.valid) {
      out.append(text.substr(i, step.length));
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
    }
    i += step.length;
  }
  out.push_back('"');
}

void JsonWriter::key(std::string_view name) {
  before_value();
  append_json_string(buffer_, name);
  buffer_ += ": ";
  after_key_ = true;
}

void JsonWriter::value(std::string_view text) {
  before_value();
  append_json_string(buffer_, text);
  flush_if_full();
}

void JsonWriter::unsigned_value(std::uint64_t number) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  raw(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void JsonWriter::signed_value(std::int64_t number) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, number).ptr;
  raw(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void JsonWriter::value(const nlohmann::json& dom, Layout layout) {
  using Type = nlohmann::json::value_t;
  switch (dom.type()) {
    case Type::object:
      begin_object(layout);
      for (auto it = dom.begin(); it != dom.end(); ++it) {
        key(it.key());
        value(*it, layout);
      }
      end_object();
      return;
    case Type::array:
      begin_array(layout);
      for (const nlohmann::json& item : dom) value(item, layout);
      end_array();
      return;
    case Type::string:
      value(std::string_view(dom.get_ref<const std::string&>()));
      return;
    case Type::boolean:
      value(dom.get<bool>());
      return;
    case Type::number_unsigned:
      unsigned_value(dom.get<std::uint64_t>());
      return;
    case Type::number_integer:
      signed_value(dom.get<std::int64_t>());
      return;
    case Type::null:
      null();
      return;
    default:  // floats (none in memrec's documents), binary, discarded: nlohmann's own text
      raw(dom.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

void JsonWriter::members(const nlohmann::json& object) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    key(it.key());
    value(*it);
  }
}

bool JsonWriter::finish() {
  buffer_.push_back('\n');
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
  out_.flush();
  return static_cast<bool>(out_);
}

void JsonWriter::open(char bracket, Layout layout) {
  before_value();
  const bool inline_layout = layout == Layout::kInline || (!levels_.empty() && levels_.back().inline_layout);
  buffer_.push_back(bracket);
  levels_.push_back({inline_layout});
}

void JsonWriter::close(char bracket) {
  const Level level = levels_.back();
  levels_.pop_back();
  if (!level.empty && !level.inline_layout) newline_and_indent(levels_.size());
  buffer_.push_back(bracket);
  flush_if_full();
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (!level.empty) buffer_.push_back(',');
  if (!level.inline_layout) {
    newline_and_indent(levels_.size());
  } else if (!level.empty) {
    buffer_.push_back(' ');
  }
  level.empty = false;
}

void JsonWriter::raw(std::string_view text) {
  before_value();
  buffer_ += text;
  flush_if_full();
}

void JsonWriter::newline_and_indent(std::size_t depth) {
  buffer_.push_back('\n');
  buffer_.append(2 * depth, ' ');
}

void JsonWriter::flush_if_full() {
  if (buffer_.size() < kFlushBytes) return;
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  buffer_.clear();
}

}  // namespace memrec::analyzer
