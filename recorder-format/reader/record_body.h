// One record's body, decoded against the frame's running state: shared by the
// record decoder (version 1's layout) and the column decoder, which finds the
// records that have no columns of their own whole in `rest`. Internal to the reader.
#pragma once

#include <cstdint>
#include <vector>

#include "byte_reader.h"
#include "memrec/format/record_encoder.h"
#include "memrec/reader/records.h"

namespace memrec::reader::detail {

struct DecodeState {
  format::DeltaState delta;  // time, addr, stack: reset for every frame
  bool have_thread = false;
  std::uint64_t tid = 0;
  std::vector<std::uint64_t> last_stack;  // the frames of the frame's previous Stack record
};

// Decodes the body of a record tagged `tag` from `in` and visits it; false
// for a tag this version does not know. A malformed body fails `in`.
bool decode_record_body(ByteReader& in, std::uint8_t tag, DecodeState& state, RecordVisitor& visitor);

}  // namespace memrec::reader::detail
