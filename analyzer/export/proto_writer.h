// A minimal protobuf encoder for the pprof export: varint and
// length-delimited fields, written by hand (no protobuf dependency).
//
//   field key  = varint((field_number << 3) | wire_type)
//   wire_type 0: varint payload          (uint64, int64, bool)
//   wire_type 2: varint(length) + bytes  (string, bytes, nested message, packed repeated)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memrec::analyzer {

class ProtoWriter {
 public:
  // Appends a varint field; zero values are written too (callers skip
  // proto3 defaults when they want to).
  void varint(std::uint32_t field, std::uint64_t value) {
    key(field, 0);
    raw_varint(value);
  }
  void bytes(std::uint32_t field, std::string_view data) {
    key(field, 2);
    raw_varint(data.size());
    out_.append(data);
  }
  void message(std::uint32_t field, const ProtoWriter& nested) { bytes(field, nested.out_); }
  // Packed repeated varints (proto3's default encoding of repeated scalars).
  void packed(std::uint32_t field, const std::vector<std::uint64_t>& values) {
    ProtoWriter body;
    for (const std::uint64_t v : values) body.raw_varint(v);
    bytes(field, body.out_);
  }

  const std::string& data() const { return out_; }

 private:
  void key(std::uint32_t field, std::uint32_t wire_type) { raw_varint((std::uint64_t{field} << 3) | wire_type); }
  void raw_varint(std::uint64_t v) {
    do {
      const auto low7 = static_cast<char>(v & 0x7f);
      v >>= 7;
      out_.push_back(static_cast<char>(low7 | (v != 0 ? 0x80 : 0)));
    } while (v != 0);
  }

  std::string out_;
};

// gzip (RFC 1952) of `data` with zlib; what `go tool pprof` expects of a
// profile file. Throws nothing: zlib errors become an empty string (they are
// only possible on memory exhaustion).
std::string gzip_compress(std::string_view data);

}  // namespace memrec::analyzer
