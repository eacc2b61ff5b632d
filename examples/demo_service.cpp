// The program ./scripts/demo records: a toy request-handling service with the
// three problems memrec is for. A cache that never evicts (a leak), a parser
// that builds throwaway strings for every request (churn and temporary
// allocations), and a worker pool whose batches make the heap peak.
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace demo {

struct Session {
  std::string user;
  std::vector<char> scratch;
};

// Never evicts: every distinct key stays for the life of the process.
class SessionCache {
 public:
  __attribute__((noinline)) Session& lookup(int key) {
    auto& slot = sessions_[key];
    if (!slot) {
      slot = std::make_unique<Session>();
      slot->user = "user-" + std::to_string(key);
      slot->scratch.resize(2048);
    }
    return *slot;
  }
  std::size_t size() const { return sessions_.size(); }

 private:
  std::map<int, std::unique_ptr<Session>> sessions_;
};

// Allocates and frees a few strings per request: churn, no growth.
__attribute__((noinline)) std::size_t parse_request(int id) {
  std::string line = "GET /items/" + std::to_string(id) + " HTTP/1.1";
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ' ') {
      parts.emplace_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts.size();
}

// Each batch holds 16 MiB for a moment: the heap's peak.
__attribute__((noinline)) std::size_t process_batch(int batch) {
  std::vector<std::vector<char>> buffers;
  for (int i = 0; i < 16; ++i) buffers.emplace_back(1 << 20, static_cast<char>(batch + i));
  std::size_t sum = 0;
  for (const auto& b : buffers) sum += static_cast<unsigned char>(b[b.size() / 2]);
  return sum;
}

}  // namespace demo

int main() {
  // Created once and never deleted, as services often do with their caches:
  // everything it holds at exit is reported as leaked.
  auto& cache = *new demo::SessionCache;
  std::size_t checksum = 0;
  for (int round = 0; round < 20; ++round) {
    for (int request = 0; request < 5000; ++request) {
      checksum += demo::parse_request(request);
      checksum += cache.lookup(round * 50 + request % 50).user.size();
    }
    std::vector<std::thread> workers;
    for (int w = 0; w < 2; ++w)
      workers.emplace_back([&checksum, round, w] { checksum += demo::process_batch(round + w); });
    for (auto& t : workers) t.join();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::printf("demo_service: handled 100000 requests, %zu sessions cached (checksum %zu)\n", cache.size(), checksum);
  return 0;
}
