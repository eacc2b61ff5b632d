// Strings go through nlohmann's own serializer, so a document written here
// escapes exactly as one dumped from a DOM; only strings that need no
// escaping at all (most names and paths) skip it.
#include "common/json_writer.h"

#include <algorithm>
#include <charconv>

namespace memrec::analyzer {

void append_json_string(std::string& out, std::string_view text) {
  const auto plain = [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b >= 0x20 && b < 0x80 && b != '"' && b != '\\';
  };
  if (std::all_of(text.begin(), text.end(), plain)) {
    out.push_back('"');
    out.append(text);
    out.push_back('"');
    return;
  }
  out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
