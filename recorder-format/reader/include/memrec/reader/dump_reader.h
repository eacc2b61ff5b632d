// The reader's entry points. `open_dump` maps a file, parses its header and
// indexes its frames without decompressing; callers then decode frames with a
// FrameDecoder (in parallel if they like). `read_all` decodes everything into
// memory, for tests and small tools.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memrec/reader/file_header_reader.h"
#include "memrec/reader/frame_decoder.h"
#include "memrec/reader/frame_index.h"
#include "memrec/reader/mapped_file.h"
#include "memrec/reader/records.h"
#include "memrec/reader/result.h"

namespace memrec::reader {

struct Dump {
  MappedFile file;
  FileHeader header;
  FrameIndex index;

  const std::string& name() const { return file.path(); }
  std::span<const std::byte> bytes() const { return file.bytes(); }
  std::uint64_t file_bytes() const { return file.bytes().size(); }

  // A frame that decompress() reported as kTruncated (it reaches the file's
  // zero tail) ends the dump: drop it and everything after it.
  void truncate_at_frame(std::size_t i);
  // Whether reading goes on past a frame reported as kTruncated: from
  // kSeveralWritersVersion on, complete frames of other writers may follow.
  bool reads_past_cut_frames() const { return header.version >= kSeveralWritersVersion; }
  // Takes the frames reported as kTruncated (ascending indexes) out of the
  // index once reading is done: those followed by a frame that decoded go to
  // `index.cut`, the others end the dump at the first of them, as does any
  // cut after the last frame kept.
  void drop_cut_frames(std::span<const std::size_t> cut_frames);
};

Result<Dump> open_dump(const std::string& path);
Result<Dump> open_dump(MappedFile file);

// Facts about a dump as a whole, gathered while decoding its frames in order.
struct DumpFacts {
  std::uint64_t file_bytes = 0;
  std::uint64_t frames = 0;  // complete frames that decoded
  std::optional<std::uint64_t> truncated_at;
  std::vector<CutFrame> cut;  // frames skipped before complete ones (FrameIndex::cut)
  bool clean_end = false;     // an End record was seen
  // The recorder's counters by key: the sum over its writer threads of each
  // one's last Counters record (FORMAT.md, "Counters"; the key naming the
  // writer left out).
  std::map<std::uint64_t, std::uint64_t> counters;
  std::map<std::uint64_t, std::map<std::uint64_t, std::uint64_t>> counters_by_writer;
  // What the last Exec record said the process was about to exec; reset by
  // one that says the exec failed (FORMAT.md, "Exec").
  std::optional<std::string> exec_path;

  // No End, nothing cut, and the last Exec record announced an exec: the
  // process image ended there (the recorder writes nothing after a
  // successful exec's record).
  bool ended_by_exec() const { return !clean_end && !truncated_at && exec_path.has_value(); }
  // Every frame read and the process's end recorded, by End or by exec.
  bool ended() const { return (clean_end && !truncated_at) || ended_by_exec(); }

  // A Counters record replaces its writer's earlier one.
  void note_counters(const CountersRecord& r);

  void note_exec(const ExecRecord& r) {
    if (r.error == 0) {
      exec_path = r.path;
    } else {
      exec_path.reset();
    }
  }
};

struct DumpContents {
  FileHeader header;
  std::vector<FrameInfo> frames;
  std::vector<std::size_t> frame_first_record;  // index into `records` of each frame's first record
  std::vector<Record> records;                  // every record, in file order
  DumpFacts facts;
};

// Decodes every frame of `dump` in file order into memory.
Result<DumpContents> read_all(Dump& dump);
Result<DumpContents> read_all(const std::string& path);

}  // namespace memrec::reader
