// The conditions in the order they are cheapest to test; the view's table
// scans call passes() once per candidate row.
#include "model/allocation_filter.h"

namespace memrec::analyzer {

bool AllocationFilter::keeps_all() const {
  return min_size == 0 && max_size == ~0ull && min_life_ns == 0 && max_life_ns == ~0ull && !thread && !alive_at_ns &&
         !live_after_ns && !site_ok;
}

bool passes(const AllocationTable& t, const AllocationFilter& f, std::uint32_t row) {
  const std::uint64_t size = t.size(row);
  if (size < f.min_size || size > f.max_size) return false;
  const std::uint64_t free = t.free_ns(row);
  const bool never_freed = free == kNeverFreed;
  if (f.live_after_ns && !never_freed && free <= *f.live_after_ns) return false;
  if (f.alive_at_ns && (t.alloc_ns(row) > *f.alive_at_ns || (!never_freed && free <= *f.alive_at_ns))) return false;
  if (f.min_life_ns != 0 || f.max_life_ns != ~0ull) {
    const std::uint64_t life = never_freed ? kNeverFreed : free - t.alloc_ns(row);
    if (life < f.min_life_ns || life > f.max_life_ns) return false;
  }
  if (f.thread && t.thread(row) != *f.thread) return false;
  if (f.site_ok) {
    const std::uint32_t s = t.site(row);
    if (s == kNoSite || s >= f.site_ok->size() || !(*f.site_ok)[s]) return false;
  }
  return true;
}

std::vector<bool> select_rows(const AllocationTable& t, const AllocationFilter& f) {
  std::vector<bool> out(t.rows(), true);
  if (f.keeps_all()) return out;
  for (std::uint32_t r = 0; r < t.rows(); ++r) out[r] = passes(t, f, r);
  return out;
}

void keep_sites(AllocationFilter& f, const std::vector<bool>& keep) {
  if (!f.site_ok) {
    f.site_ok = keep;
    return;
  }
  std::vector<bool>& ok = *f.site_ok;
  for (std::size_t s = 0; s < ok.size(); ++s) ok[s] = ok[s] && s < keep.size() && keep[s];
}

}  // namespace memrec::analyzer
