// The fraction shown while a dump loads never says 1 before it is served:
// the report's pass reads the last bytes before it symbolizes the sites.
#include "server/dump_load.h"

#include <algorithm>

namespace memrec::analyzer::server {

void DumpLoad::progress(std::uint64_t bytes_read, std::uint64_t bytes_total) {
  bytes_read_.store(bytes_read, std::memory_order_relaxed);
  bytes_total_.store(bytes_total, std::memory_order_relaxed);
}

double DumpLoad::fraction() const {
  if (state() == LoadState::kReady) return 1.0;
  const std::uint64_t total = bytes_total();
  if (total == 0) return 0.0;
  return std::min(0.99, static_cast<double>(std::min(bytes_read(), total)) / static_cast<double>(total));
}

void DumpLoad::fail(std::string why) {
  error_ = std::move(why);
  state_.store(LoadState::kFailed, std::memory_order_release);
}

}  // namespace memrec::analyzer::server
