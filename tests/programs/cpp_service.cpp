// A C++ service for tests/integration/test_cpp_service.py: 4 threads x 500 requests.
// Per request: render_response makes 7 string blocks and frees them;
// record_request_log adds a 31-byte entry to its thread's log (freed at thread end);
// cache_store adds a 1000-byte value, a 23-byte key and a node to a shared
// unordered_map leaked at exit with its last bucket array and main's 96-byte Cache.
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

constexpr int kWorkers = 4;
constexpr int kRequestsPerWorker = 500;
constexpr std::size_t kValueBytes = 1000;

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<char>> entries;  // guarded by mutex
};

// Leaked on purpose: a cache that only grows and outlives every request is
// what the test looks for among the leaks.
Cache* g_cache = nullptr;

// Builds the key here, at its final length (22 characters, so past the
// small-string buffer: one allocation of exactly 23 bytes), so the key's
// block, the value's and the node's are all made under cache_store.
[[gnu::noinline]] void cache_store(Cache& cache, int request) {
  char text[32];
  const int length = std::snprintf(text, sizeof text, "cache/request/%08d", request);
  std::string key(text, static_cast<std::size_t>(length));
  std::vector<char> value(kValueBytes, static_cast<char>('a' + request % 26));
  const std::lock_guard<std::mutex> lock(cache.mutex);
  cache.entries.try_emplace(std::move(key), std::move(value));
}

// String churn as a handler does it: concatenation, appends and
// std::to_string, into strings longer than the small-string buffer.
[[gnu::noinline]] std::string render_response(int request, int worker) {
  std::string response = "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n";
  response += "x-request-id: request-" + std::to_string(request) + "\r\n";
  response += "x-served-by: worker-thread-number-" + std::to_string(worker) + "\r\n\r\n";
  for (int i = 0; i < 3; ++i) response.append("the quick brown fox jumps over the lazy dog\n");
  return response;
}

// One 30-character entry (31 bytes with its terminator) per request, pushed
// onto a vector that doubles as it grows.
[[gnu::noinline]] void record_request_log(std::vector<std::string>& log, int request, std::size_t bytes) {
  char text[48];
  const int length = std::snprintf(text, sizeof text, "request %08d sent %06zu B", request, bytes);
  log.push_back(std::string(text, static_cast<std::size_t>(length)));
}

[[gnu::noinline]] void serve(int worker, std::size_t& response_bytes) {
  std::vector<std::string> log;  // this thread's, freed when it returns
  for (int i = 0; i < kRequestsPerWorker; ++i) {
    const int request = worker * kRequestsPerWorker + i;
    const std::string response = render_response(request, worker);
    response_bytes += response.size();
    record_request_log(log, request, response.size());
    cache_store(*g_cache, request);
  }
}

}  // namespace

int main() {
  g_cache = new Cache;
  std::vector<std::size_t> response_bytes(kWorkers, 0);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) workers.emplace_back(serve, w, std::ref(response_bytes[w]));
  for (std::thread& t : workers) t.join();
  std::size_t total = 0;
  for (const std::size_t bytes : response_bytes) total += bytes;
  std::printf("served %d requests (%zu response bytes), cache %zu entries in %zu buckets\n",
              kWorkers * kRequestsPerWorker, total, g_cache->entries.size(), g_cache->entries.bucket_count());
  return 0;
}
