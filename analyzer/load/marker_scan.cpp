// Decodes every frame once, keeping only its Marker records. This costs a
// pass over the file, paid only when a range names a marker.
#include "load/marker_scan.h"

#include <algorithm>

#include "memrec/reader/dump_reader.h"

namespace memrec::analyzer {
namespace {

class MarkerCollector : public reader::RecordVisitor {
 public:
  explicit MarkerCollector(std::vector<reader::MarkerRecord>& out) : out_(out) {}
  void on_marker(const reader::MarkerRecord& r) override { out_.push_back(r); }

 private:
  std::vector<reader::MarkerRecord>& out_;
};

}  // namespace

Result<std::vector<reader::MarkerRecord>> scan_markers(const std::string& path) {
  auto dump = reader::open_dump(path);
  if (!dump) return dump.error();
  std::vector<reader::MarkerRecord> markers;
  MarkerCollector collect(markers);
  reader::FrameDecoder decoder;
  for (const reader::FrameInfo& frame : dump->index.frames) {
    if (!decoder.decode(dump->bytes(), frame, dump->name(), collect)) break;
  }
  std::stable_sort(markers.begin(), markers.end(),
                   [](const reader::MarkerRecord& a, const reader::MarkerRecord& b) { return a.time_ns < b.time_ns; });
  return markers;
}

}  // namespace memrec::analyzer
