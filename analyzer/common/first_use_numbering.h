// Numbers the rows of a table in a JSON document (report_json.cpp,
// diff/diff_command.cpp) in the order the document first uses them, so the
// table holds only rows something points to and reads in a stable order
// whatever the ids were inside memrec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memrec::analyzer {

class FirstUseNumbering {
 public:
  // Ids are 0 .. `ids` - 1.
  explicit FirstUseNumbering(std::size_t ids) : number_(ids, kNone) {}

  // The number of `id`, which it gets now if it has none yet.
  std::uint32_t use(std::uint32_t id) {
    if (number_[id] == kNone) {
      number_[id] = static_cast<std::uint32_t>(used_.size());
      used_.push_back(id);
    }
    return number_[id];
  }
  // pre: `id` was used.
  std::uint32_t operator[](std::uint32_t id) const { return number_[id]; }
  // The ids used, by number: the table's rows in order.
  const std::vector<std::uint32_t>& used() const { return used_; }

 private:
  static constexpr std::uint32_t kNone = ~0u;
  std::vector<std::uint32_t> number_;  // by id
  std::vector<std::uint32_t> used_;
};

}  // namespace memrec::analyzer
