// The streaming JSON writer: strings escaped byte for byte as nlohmann's
// dump(error_handler_t::replace) escapes them, and documents that parse back
// to what was written.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/json_writer.h"

using memrec::analyzer::append_json_string;
using memrec::analyzer::JsonWriter;
using nlohmann::json;

namespace {

std::string escaped(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

std::string nlohmann_escaped(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

TEST_SUITE("common/json_writer") {
  TEST_CASE("escapes quotes, backslashes and control characters as nlohmann does") {
    CHECK(escaped("a\"b\\c/d") == R"("a\"b\\c/d")");
    CHECK(escaped(std::string("\b\t\n\f\r\x01\x1f\x7f", 8)) == "\"\\b\\t\\n\\f\\r\\u0001\\u001f\x7f\"");
    CHECK(escaped(std::string("nul\0here", 8)) == R"("nul\u0000here")");
  }

  TEST_CASE("keeps well-formed UTF-8 and replaces each ill-formed sequence by one U+FFFD") {
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(escaped("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
    CHECK(escaped("a\xFFz") == "\"a" + fffd + "z\"");                               // never a UTF-8 byte
    CHECK(escaped("a\xE2\x82z") == "\"a" + fffd + "z\"");                           // cut short: one U+FFFD, z kept
    CHECK(escaped("\xC0\xAF") == "\"" + fffd + fffd + "\"");                        // overlong '/'
    CHECK(escaped("\xED\xA0\x80") == "\"" + fffd + fffd + fffd + "\"");             // a surrogate
    CHECK(escaped("\xF4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // above U+10FFFF
    CHECK(escaped("end\xF0\x9F\x98") == "\"end" + fffd + "\"");                     // cut by the string's end
  }

  TEST_CASE("escapes every string exactly as nlohmann's replace handler does") {
    // Bytes drawn mostly from the interesting ranges: ASCII, control
    // characters, continuation bytes and every kind of lead byte.
    const std::vector<std::uint8_t> alphabet = {'a',  '"',  '\\', 0x00, 0x1f, 0x7f, 0x80, 0x8f, 0x90,
                                                0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1,
                                                0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff};
    std::mt19937 random(12345);
    for (int round = 0; round < 20000; ++round) {
      std::string text(random() % 12, '\0');
      for (char& c : text) c = static_cast<char>(alphabet[random() % alphabet.size()]);
      CAPTURE(json::binary(std::vector<std::uint8_t>(text.begin(), text.end())).dump());
      REQUIRE(escaped(text) == nlohmann_escaped(text));
    }
  }

  TEST_CASE("writes block and inline containers that parse back to what was written") {
    std::ostringstream out;
    JsonWriter w(out);
    w.begin_object();
    w.key("name");
    w.value("x\ny");
    w.key("empty");
    w.begin_array();
    w.end_array();
    w.key("rows");
    w.begin_array();
    w.begin_object(JsonWriter::Layout::kInline);
    w.key("ids");
    w.begin_array();
    w.value(std::uint32_t{1});
    w.value(std::int64_t{-2});
    w.end_array();
    w.members(json{{"ok", true}, {"none", nullptr}});
    w.end_object();
    w.end_array();
    w.key("dom");
    w.value(json{{"list", {1, 2}}, {"nested", json::object()}});
    w.end_object();
    REQUIRE(w.finish());
    const std::string text = out.str();
    CHECK(text ==
          "{\n"
          "  \"name\": \"x\\ny\",\n"
          "  \"empty\": [],\n"
          "  \"rows\": [\n"
          "    {\"ids\": [1, -2], \"none\": null, \"ok\": true}\n"
          "  ],\n"
          "  \"dom\": {\n"
          "    \"list\": [\n"
          "      1,\n"
          "      2\n"
          "    ],\n"
          "    \"nested\": {}\n"
          "  }\n"
          "}\n");
    CHECK(json::parse(text) == json{{"name", "x\ny"},
                                    {"empty", json::array()},
                                    {"rows", {{{"ids", {1, -2}}, {"none", nullptr}, {"ok", true}}}},
                                    {"dom", {{"list", {1, 2}}, {"nested", json::object()}}}});
  }

  TEST_CASE("writes a document larger than its buffer whole") {
    std::ostringstream out;
    JsonWriter w(out);
    w.begin_array(JsonWriter::Layout::kInline);
    for (std::uint64_t i = 0; i < 100000; ++i) w.value(i);
    w.end_array();
    REQUIRE(w.finish());
    const json back = json::parse(out.str());
    REQUIRE(back.size() == 100000);
    CHECK(back[99999] == 99999);
  }

  TEST_CASE("reports a stream that failed") {
    std::ostringstream out;
    out.setstate(std::ios::badbit);
    JsonWriter w(out);
    w.value("lost");
    CHECK_FALSE(w.finish());
  }
}
