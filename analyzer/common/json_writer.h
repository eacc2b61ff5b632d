// Writes JSON as it is produced, for documents too large to hold as a DOM
// (`memrec report --json`, `memrec export --format json`: report_json.cpp).
// Layout: nlohmann's dump(2) (two-space indent) except in containers begun
// kInline, whose members stay on one line. Never throws on bad UTF-8: strings
// are escaped as nlohmann's error_handler_t::replace does (append_json_string).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace memrec::analyzer {

// Appends `text` as a quoted JSON string, escaped by nlohmann's serializer
// with error_handler_t::replace: control characters as \b \t \n \f \r or
// \u00xx, each ill-formed UTF-8 sequence as U+FFFD. Dump paths and names
// are the kernel's bytes, not promised UTF-8.
void append_json_string(std::string& out, std::string_view text);

class JsonWriter {
 public:
  enum class Layout { kBlock, kInline };

  // Writes to `out`, in pieces of about kFlushBytes; finish() writes the rest.
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void begin_object(Layout layout = Layout::kBlock) { open('{', layout); }
  void end_object() { close('}'); }
  void begin_array(Layout layout = Layout::kBlock) { open('[', layout); }
  void end_array() { close(']'); }
  // pre: inside an object, and the previous key has its value.
  void key(std::string_view name);

  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }  // not the bool overload
  void value(bool b) { raw(b ? "true" : "false"); }
  template <std::integral T>
  requires(!std::same_as<T, bool>) void value(T number) {
    if constexpr (std::is_signed_v<T>) {
      signed_value(number);
    } else {
      unsigned_value(number);
    }
  }
  void null() { raw("null"); }
  // A DOM value (small parts of a document); its containers take `layout`.
  void value(const nlohmann::json& dom, Layout layout = Layout::kBlock);
  // pre: `object` is an object and the writer is inside one: adds its members.
  void members(const nlohmann::json& object);

  // Ends the document with a newline and writes out what is buffered.
  // Returns false if the stream failed at any point.
  [[nodiscard]] bool finish();

 private:
  static constexpr std::size_t kFlushBytes = 1 << 16;
  struct Level {
    bool inline_layout;
    bool empty = true;
  };

  void unsigned_value(std::uint64_t number);
  void signed_value(std::int64_t number);
  void open(char bracket, Layout layout);
  void close(char bracket);
  void before_value();  // the separator and line break a new member needs
  void raw(std::string_view text);
  void newline_and_indent(std::size_t depth);
  void flush_if_full();

  std::ostream& out_;
  std::string buffer_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace memrec::analyzer
