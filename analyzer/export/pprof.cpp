// `memrec export --format pprof`: a profile.proto (github.com/google/pprof,
// proto/profile.proto) heap profile, gzipped. Field numbers used:
//   Profile   1 sample_type  2 sample  3 mapping  4 location  5 function
//             6 string_table 9 time_nanos 10 duration_nanos 11 period_type
//             12 period 14 default_sample_type
//   ValueType 1 type 2 unit                      (string table indices)
//   Sample    1 location_id (packed, leaf first) 2 value (packed) 3 label
//   Label     1 key 2 str 3 num
//   Mapping   1 id 2 memory_start 3 memory_limit 4 file_offset 5 filename
//             6 build_id 7 has_functions 8 has_filenames 9 has_line_numbers
//             10 has_inline_frames
//   Location  1 id 2 mapping_id 3 address 4 line (innermost first: the last
//             line is the function the others were inlined into)
//   Line      1 function_id 2 line
//   Function  1 id 2 name 3 system_name 4 filename
// Addresses are module offsets placed in a synthetic range per module (each
// mapping 2^40 bytes apart), so builds with different ASLR layouts give the
// same file; every location carries its functions and lines already.
#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "export/export_writers.h"
#include "export/proto_writer.h"

namespace memrec::analyzer {
namespace {

constexpr std::uint64_t kMappingSpan = 1ull << 40;

class StringTable {
 public:
  StringTable() { index(""); }
  std::uint64_t index(const std::string& s) {
    const auto [it, inserted] = ids_.try_emplace(s, strings_.size());
    if (inserted) strings_.push_back(s);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, std::uint64_t> ids_;
  std::vector<std::string> strings_;
};

std::string hex(const std::vector<std::byte>& bytes) {
  std::string out;
  for (const std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

class ProfileBuilder {
 public:
  ProtoWriter value_type(const char* type, const char* unit) {
    ProtoWriter w;
    w.varint(1, strings_.index(type));
    w.varint(2, strings_.index(unit));
    return w;
  }

  // `values`: by site, instead of the report's own figures (memrec view's
  // windows); a site whose values are all 0 is left out.
  void add_report(const HeapReport& r, bool label_pid, std::span<const PprofValues> values = {}) {
    // The main executable is the first mapping: go tool pprof names the
    // profile's `File:` after it.
    if (mappings_.empty() && !r.dump.header.exe_path.empty()) mapping_id(r, main_module(r));
    for (std::uint32_t id = 0; id < r.sites.sites.size(); ++id) {
      const CallSite& site = r.sites.sites[id];
      // Live at the end: runtime sites too.
      PprofValues v = values.empty()       ? PprofValues{static_cast<std::int64_t>(site.allocations),
                                                   static_cast<std::int64_t>(site.allocated_bytes),
                                                   static_cast<std::int64_t>(site.leaked_count),
                                                   static_cast<std::int64_t>(site.leaked_bytes)}
                      : id < values.size() ? values[id]
                                           : PprofValues{};
      if (values.empty() ? v.alloc_objects == 0 && v.inuse_space == 0 : v == PprofValues{}) continue;
      ProtoWriter sample;
      sample.packed(1, locations_of(r, site));
      // int64 on the wire: a delta's negative values are their two's complement.
      sample.packed(2, {static_cast<std::uint64_t>(v.alloc_objects), static_cast<std::uint64_t>(v.alloc_space),
                        static_cast<std::uint64_t>(v.inuse_objects), static_cast<std::uint64_t>(v.inuse_space)});
      if (label_pid) {
        ProtoWriter label;
        label.varint(1, strings_.index("pid"));
        label.varint(3, r.dump.header.pid);
        sample.message(3, label);
      }
      samples_.push_back(std::move(sample));
    }
  }

  std::string finish(std::uint64_t time_nanos, std::uint64_t duration_nanos, const char* default_type) {
    ProtoWriter p;
    p.message(1, value_type("alloc_objects", "count"));
    p.message(1, value_type("alloc_space", "bytes"));
    p.message(1, value_type("inuse_objects", "count"));
    p.message(1, value_type("inuse_space", "bytes"));
    for (const ProtoWriter& s : samples_) p.message(2, s);
    for (const ProtoWriter& m : mappings_) p.message(3, m);
    for (const ProtoWriter& l : locations_) p.message(4, l);
    for (const ProtoWriter& f : functions_) p.message(5, f);
    const std::uint64_t period_type = strings_.index("space");
    const std::uint64_t bytes = strings_.index("bytes");
    const std::uint64_t default_index = strings_.index(default_type);
    for (const std::string& s : strings_.strings()) p.bytes(6, s);
    p.varint(9, time_nanos);
    p.varint(10, duration_nanos);
    ProtoWriter period;
    period.varint(1, period_type);
    period.varint(2, bytes);
    p.message(11, period);
    p.varint(12, 1);
    p.varint(14, default_index);
    return gzip_compress(p.data());
  }

 private:
  // The location ids of a site, leaf first: each return address is one
  // location whose lines are its inline chain.
  std::vector<std::uint64_t> locations_of(const HeapReport& r, const CallSite& site) {
    std::vector<std::uint64_t> ids;
    std::vector<std::uint32_t> group;
    std::uint32_t at = 0;
    for (const std::uint32_t f : site.frames) {
      // Library frames under the label frame are trimmed, as Go's runtime
      // trims its allocator: the program's allocating function is the leaf,
      // its flat figures the program's own (none trimmed with raw_frames).
      if (at++ < site.label_frame) continue;
      group.push_back(f);
      if (!r.sites.frames[f].inlined) {
        ids.push_back(location(r, group));
        group.clear();
      }
    }
    if (!group.empty()) ids.push_back(location(r, group));
    return ids;
  }

  // A frame without inlined callers, most of them, is found by its id (a
  // string key per frame of each site was 40 % of cc1plus's export).
  std::uint64_t location(const HeapReport& r, const std::vector<std::uint32_t>& group) {
    if (group.size() == 1) {
      std::vector<std::uint64_t>& of_frame = single_ids_[&r];
      if (of_frame.empty()) of_frame.assign(r.sites.frames.size(), 0);
      std::uint64_t& id = of_frame[group[0]];
      if (id == 0) id = new_location(r, group);
      return id;
    }
    std::string key = fmt::format("{}", static_cast<const void*>(&r));
    for (const std::uint32_t f : group) key += fmt::format(",{}", f);
    const auto found = location_ids_.find(key);
    if (found != location_ids_.end()) return found->second;
    const std::uint64_t id = new_location(r, group);
    location_ids_.emplace(std::move(key), id);
    return id;
  }

  std::uint64_t new_location(const HeapReport& r, const std::vector<std::uint32_t>& group) {
    const SiteFrame& outer = r.sites.frames[group.back()];
    const std::uint64_t id = locations_.size() + 1;
    ProtoWriter loc;
    loc.varint(1, id);
    std::uint64_t address = outer.module_offset;
    if (!outer.module.empty()) {
      const std::uint64_t mapping = mapping_id(r, outer.module);
      loc.varint(2, mapping);
      address += mapping * kMappingSpan;
    }
    loc.varint(3, address);
    for (const std::uint32_t f : group) {
      const SiteFrame& frame = r.sites.frames[f];
      ProtoWriter line;
      line.varint(1, function_id(frame));
      if (frame.line != 0) line.varint(2, frame.line);
      loc.message(4, line);
    }
    locations_.push_back(std::move(loc));
    return id;
  }

  // The recorded module of the executable (its path as the module map has
  // it, which is the one frames name), else the header's path.
  static std::string main_module(const HeapReport& r) {
    const std::string& exe = r.dump.header.exe_path;
    for (const ModuleInfo& m : r.dump.modules) {
      if (m.path == exe) return m.path;
    }
    for (const ModuleInfo& m : r.dump.modules) {
      const std::size_t slash = exe.rfind('/');
      if (!m.path.empty() && m.path.ends_with(slash == std::string::npos ? exe : exe.substr(slash))) return m.path;
    }
    return exe;
  }

  std::uint64_t mapping_id(const HeapReport& r, const std::string& path) {
    std::string build_id;
    for (const ModuleInfo& m : r.dump.modules) {
      if (m.path == path) build_id = hex(m.build_id);
    }
    const std::string key = path + '\x1f' + build_id;
    const auto found = mapping_ids_.find(key);
    if (found != mapping_ids_.end()) return found->second;
    const std::uint64_t id = mappings_.size() + 1;
    ProtoWriter m;
    m.varint(1, id);
    m.varint(2, id * kMappingSpan);
    m.varint(3, (id + 1) * kMappingSpan);
    m.varint(4, 0);
    m.varint(5, strings_.index(path));
    m.varint(6, strings_.index(build_id));
    for (const std::uint32_t field : {7u, 8u, 9u, 10u}) m.varint(field, 1);
    mappings_.push_back(std::move(m));
    mapping_ids_.emplace(key, id);
    return id;
  }

  std::uint64_t function_id(const SiteFrame& frame) {
    const std::string name = export_frame_name(frame);
    const std::string key = name + '\x1f' + frame.file;
    const auto found = function_ids_.find(key);
    if (found != function_ids_.end()) return found->second;
    const std::uint64_t id = functions_.size() + 1;
    ProtoWriter f;
    f.varint(1, id);
    f.varint(2, strings_.index(name));
    f.varint(3, strings_.index(name));
    f.varint(4, strings_.index(frame.file));
    functions_.push_back(std::move(f));
    function_ids_.emplace(key, id);
    return id;
  }

  StringTable strings_;
  std::vector<ProtoWriter> samples_;
  std::vector<ProtoWriter> mappings_;
  std::vector<ProtoWriter> locations_;
  std::vector<ProtoWriter> functions_;
  std::unordered_map<std::string, std::uint64_t> mapping_ids_;
  std::unordered_map<std::string, std::uint64_t> location_ids_;                   // groups of inline frames
  std::unordered_map<const HeapReport*, std::vector<std::uint64_t>> single_ids_;  // by report, then frame: 0 or its id
  std::unordered_map<std::string, std::uint64_t> function_ids_;
};

}  // namespace

std::string export_pprof(const std::vector<const HeapReport*>& reports) {
  ProfileBuilder builder;
  for (const HeapReport* r : reports) builder.add_report(*r, reports.size() > 1);
  if (reports.empty()) return {};
  const HeapReport& first = *reports.front();
  return builder.finish(first.dump.header.start_wall_ns, first.duration_ns, "inuse_space");
}

std::string export_pprof_values(const HeapReport& report, std::span<const PprofValues> values,
                                const PprofWindow& window) {
  ProfileBuilder builder;
  builder.add_report(report, false, values);
  return builder.finish(window.time_nanos, window.duration_nanos,
                        window.default_alloc_space ? "alloc_space" : "inuse_space");
}

}  // namespace memrec::analyzer
