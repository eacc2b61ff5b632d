// The compiler workload of scripts/bench: scripts/bench runs cc1plus -O0 on this
// file (never linked or run). It instantiates much of the standard library over
// several types, as template-heavy application code does. -DBENCH_SMALL
// compiles only a few lines, for the quick run of ./scripts/test.
#ifdef BENCH_SMALL
#include <string>
#include <vector>

int main() {
  std::vector<std::string> words{"alpha", "beta"};
  return static_cast<int>(words.size());
}
#endif

#ifndef BENCH_SMALL
#include <algorithm>
#include <deque>
#include <functional>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <ranges>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace bench {

template <int N>
struct Record {
  int id = N;
  std::string name = "record";
  std::vector<double> values;
  bool operator==(const Record&) const = default;
  bool operator<(const Record& other) const {
    return std::tie(id, name, values) < std::tie(other.id, other.name, other.values);
  }
};

template <int N>
struct RecordHash {
  std::size_t operator()(const Record<N>& r) const { return std::hash<std::string>{}(r.name) ^ r.id; }
};

// Uses each container and algorithm with Record<N>, so every N is a new set of
// instantiations for the compiler.
template <int N>
std::string exercise(const std::vector<std::string>& words) {
  using R = Record<N>;
  std::vector<R> records;
  for (const auto& w : words) records.push_back(R{static_cast<int>(w.size()), w, {1.0 * N, 2.0}});
  std::sort(records.begin(), records.end());
  std::map<std::string, R> by_name;
  std::unordered_map<R, int, RecordHash<N>> counts;
  std::set<R> unique(records.begin(), records.end());
  std::unordered_set<std::string> names;
  std::deque<R> queue(records.begin(), records.end());
  std::list<R> linked(records.rbegin(), records.rend());
  for (const auto& r : records) {
    by_name.emplace(r.name, r);
    ++counts[r];
    names.insert(r.name);
  }
  std::map<int, std::vector<std::shared_ptr<R>>> groups;
  for (const auto& r : unique) groups[r.id % 7].push_back(std::make_shared<R>(r));
  std::variant<int, std::string, R> v = records.empty() ? R{} : records.front();
  std::string text = std::visit(
      [](const auto& x) -> std::string {
        std::ostringstream out;
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, R>) {
          out << x.name << ':' << x.id;
        } else {
          out << x;
        }
        return out.str();
      },
      v);
  std::function<double(const R&)> weight = [](const R& r) {
    return std::accumulate(r.values.begin(), r.values.end(), 0.0);
  };
  auto heavy = records | std::views::filter([&](const R& r) { return weight(r) > N; }) |
               std::views::transform([](const R& r) { return r.name; });
  for (const auto& name : heavy) text += name;
  std::optional<R> found;
  if (auto it = std::find_if(queue.begin(), queue.end(), [](const R& r) { return r.id == N; }); it != queue.end()) {
    found = *it;
  }
  std::tuple<std::size_t, std::size_t, bool> summary{linked.size(), groups.size(), found.has_value()};
  std::regex pattern("[a-z]+" + std::to_string(N));
  std::smatch match;
  if (std::regex_search(text, match, pattern)) text += match.str();
  return text + std::to_string(std::get<0>(summary) + counts.size() + names.size());
}

template <int... Ns>
std::string exercise_all(const std::vector<std::string>& words, std::integer_sequence<int, Ns...>) {
  return (exercise<Ns>(words) + ...);
}

}  // namespace bench

int main() {
  const std::vector<std::string> words{"alpha", "beta", "gamma", "delta"};
  std::cout << bench::exercise_all(words, std::make_integer_sequence<int, 3>{}) << '\n';
}
#endif
