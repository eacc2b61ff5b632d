// Routes: /api/... answer JSON (errors as {"error": …} with a 4xx/5xx
// status), everything else is an embedded asset or a 404. The page's own
// files are served with a Content-Security-Policy that allows no inline
// script, so a name from a dump can never run as code.
#include "server/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <variant>
#include <vector>

#include "server/embedded_assets.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
constexpr std::size_t kMaxParamBytes = 64;
constexpr std::size_t kMaxMatchBytes = 256;  // `match` (a regular expression) and `search` (a frame name's part)
constexpr std::size_t kMaxNameBytes = 4096;  // `name`: a whole demangled C++ name, template arguments and all

void common_headers(httplib::Response& res) {
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-store");
  res.set_header("Referrer-Policy", "no-referrer");
}

// Names from a dump need not be UTF-8: replace what is not, never throw.
void send_json(httplib::Response& res, int status, const json& body) {
  common_headers(res);
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json; charset=utf-8");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, json{{"error", message}});
}

void send_answer(httplib::Response& res, const ApiAnswer& answer) {
  if (answer.error) {
    json body{{"error", answer.error->message}};
    if (answer.error->building_percent) {
      body["building"] = *answer.error->building_percent;
      res.set_header("Retry-After", "2");
    }
    if (answer.error->loading_percent) {
      body["loading"] = *answer.error->loading_percent;
      res.set_header("Retry-After", "2");
    }
    send_json(res, answer.error->status, body);
  } else if (answer.file) {
    common_headers(res);
    res.status = 200;
    res.set_header("Content-Disposition", "attachment; filename=\"" + answer.file->filename + "\"");
    res.set_content(answer.file->bytes, answer.file->content_type.c_str());
  } else {
    send_json(res, 200, answer.body);
  }
}

// Any parameter longer than kMaxParamBytes (`match`, `search`: kMaxMatchBytes;
// `name`: kMaxNameBytes) is refused before a handler sees it.
bool params_ok(const httplib::Request& req, httplib::Response& res) {
  for (const auto& [name, value] : req.params) {
    const bool text = name == "match" || name == "search";
    const std::size_t max = name == "name" ? kMaxNameBytes : text ? kMaxMatchBytes : kMaxParamBytes;
    if (name.size() > kMaxParamBytes || value.size() > max) {
      send_error(res, 400,
                 name == "name" ? std::string("name is longer than 4096 bytes.")
                 : text         ? name + " is longer than 256 bytes."
                                : std::string("A query parameter is longer than 64 bytes."));
      return false;
    }
  }
  return true;
}

ParamFn params_of(const httplib::Request& req) {
  return [&req](const std::string& name) -> std::optional<std::string> {
    if (!req.has_param(name.c_str())) return std::nullopt;
    return req.get_param_value(name.c_str());
  };
}

// A path the server must not map onto anything: "..", "\", NUL, "//".
bool is_traversal(const std::string& path) {
  return path.find("..") != std::string::npos || path.find('\\') != std::string::npos ||
         path.find('\0') != std::string::npos || path.find("//") != std::string::npos;
}

void serve_asset(const httplib::Request& req, httplib::Response& res) {
  if (is_traversal(req.path)) {
    send_error(res, 400, "The path may not contain '..', '//' or '\\'.");
    return;
  }
  const std::string path = req.path == "/" ? "/index.html" : req.path;
  const EmbeddedAsset* asset = find_asset(path);
  if (asset == nullptr) {
    send_error(res, 404, "Nothing is served at this path.");
    return;
  }
  common_headers(res);
  res.set_header("Content-Security-Policy", kCsp);
  res.status = 200;
  res.set_content(reinterpret_cast<const char*>(asset->bytes.data()), asset->bytes.size(),
                  std::string(asset->content_type).c_str());
}

// A handler that reads the dumps: with --follow, under the lock the follow
// loop replaces them under (view_api.h ViewData::follow_lock).
template <typename Handler>
auto guarded(const ViewData& data, Handler handler) {
  return [&data, handler](const httplib::Request& req, httplib::Response& res) {
    std::shared_lock<std::shared_mutex> lock;
    if (data.follow_lock) lock = std::shared_lock(*data.follow_lock);
    handler(req, res);
  };
}

// A dump endpoint: /api/dumps/{id}/NAME, answered by `fn(data, id, params)`.
template <typename Fn>
void dump_route(httplib::Server& svr, const ViewData& data, const std::string& name, Fn fn) {
  svr.Get("/api/dumps/([^/]+)/" + name, guarded(data, [&data, fn](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res)) send_answer(res, fn(data, req.matches[1], params_of(req)));
          }));
}

// A live dump's next seconds (?seconds=N, as Go's net/http/pprof): the
// request waits for them with the lock let go, so the follow loop goes on
// taking them in, and gives up waiting a poll's worth of slack after the
// seconds (a service that makes no event moves no edge; its window then
// holds what came).
// Each waiting request holds one of the server's worker threads (cpp-httplib
// has about 8); beyond this many waits the page itself would stall.
constexpr int kMaxPprofWaits = 4;

// Counts the requests waiting on a live window while it lives.
class PprofWaitSlot {
 public:
  PprofWaitSlot() : taken_(waiting().fetch_add(1) < kMaxPprofWaits) {}
  ~PprofWaitSlot() { waiting().fetch_sub(1); }
  PprofWaitSlot(const PprofWaitSlot&) = delete;
  PprofWaitSlot& operator=(const PprofWaitSlot&) = delete;
  bool taken() const { return taken_; }

 private:
  static std::atomic<int>& waiting() {
    static std::atomic<int> count{0};
    return count;
  }
  bool taken_;
};

void send_pprof(const ViewData& data, PprofProfile profile, const ParamFn& params, httplib::Response& res) {
  const auto locked = [&data] {
    std::shared_lock<std::shared_mutex> lock;
    if (data.follow_lock) lock = std::shared_lock(*data.follow_lock);
    return lock;
  };
  std::optional<PprofLiveWindow> live;
  {
    const auto lock = locked();
    auto window = pprof_live_window(data, params);
    if (auto* error = std::get_if<ApiError>(&window)) {
      send_answer(res, ApiAnswer{nlohmann::json(nullptr), *error, std::nullopt});
      return;
    }
    live = std::get<std::optional<PprofLiveWindow>>(window);
  }
  std::optional<PprofWaitSlot> slot;
  if (live) {
    slot.emplace();
    if (!slot->taken()) {
      res.set_header("Retry-After", "5");
      send_error(res, 503,
                 "Already " + std::to_string(kMaxPprofWaits) +
                     " requests wait for a live dump's next seconds; try again when one is answered, or ask for a "
                     "past window with ?at=T.");
      return;
    }
    constexpr auto kSlack = std::chrono::seconds(10);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(live->to_ns - live->from_ns) + kSlack;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        const auto lock = locked();
        if (pprof_window_complete(data, *live)) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  const auto lock = locked();
  send_answer(res, api_pprof(data, profile, params, live));
}

void add_routes(httplib::Server& svr, const ViewData& data) {
  svr.Get("/api/dumps", guarded(data, [&data](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res)) send_answer(res, api_dumps(data));
          }));
  dump_route(svr, data, "summary", api_summary);
  dump_route(svr, data, "timeline", api_timeline);
  dump_route(svr, data, "sites", api_sites);
  dump_route(svr, data, "flame", api_flame);
  dump_route(svr, data, "functions", api_functions);
  dump_route(svr, data, "instant", api_instant);
  dump_route(svr, data, "allocations", api_allocations);
  dump_route(svr, data, "export", api_export);
  dump_route(svr, data, "maps", api_maps);
  dump_route(svr, data, "threads",
             [](const ViewData& d, const std::string& id, const ParamFn&) { return api_threads(d, id); });
  svr.Get(R"(/api/dumps/([^/]+)/sites/([^/]+)/series)",
          guarded(data, [&data](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res))
              send_answer(res, api_site_series(data, req.matches[1], req.matches[2], params_of(req)));
          }));
  svr.Get(R"(/api/dumps/([^/]+)/sites/([^/]+))",
          guarded(data, [&data](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res)) send_answer(res, api_site(data, req.matches[1], req.matches[2], params_of(req)));
          }));
  svr.Get(R"(/api/dumps/([^/]+)/allocations/([^/]+))",
          guarded(data, [&data](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res))
              send_answer(res, api_allocation(data, req.matches[1], req.matches[2], params_of(req)));
          }));
  svr.Get("/api/diff/flame", guarded(data, [&data](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res)) send_answer(res, api_diff_flame(data, params_of(req)));
          }));
  svr.Get("/api/diff/sites", guarded(data, [&data](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res)) send_answer(res, api_diff_sites(data, params_of(req)));
          }));
  svr.Get("/api/diff/report", guarded(data, [&data](const httplib::Request& req, httplib::Response& res) {
            if (params_ok(req, res)) send_answer(res, api_diff_report(data, params_of(req)));
          }));
  for (const auto& [path, profile] :
       {std::pair{"/debug/pprof/heap", PprofProfile::kHeap}, std::pair{"/debug/pprof/allocs", PprofProfile::kAllocs}}) {
    svr.Get(path, [&data, profile](const httplib::Request& req, httplib::Response& res) {
      if (params_ok(req, res)) send_pprof(data, profile, params_of(req), res);
    });
  }
  svr.Get(R"(/debug/pprof(/.*)?)", [](const httplib::Request&, httplib::Response& res) {
    send_error(res, 404, "memrec serves /debug/pprof/heap and /debug/pprof/allocs (docs/pprof.md).");
  });
  svr.Get(R"(/api(/.*)?)", [](const httplib::Request&, httplib::Response& res) {
    send_error(res, 404, "No such API endpoint: see docs/api.md.");
  });
  svr.Get(R"(/.*)", serve_asset);
}

}  // namespace

bool serve(const ViewData& data, const ServeOptions& options, const std::function<void(int)>& on_listening,
           std::string& error) {
  httplib::Server svr;
  svr.set_payload_max_length(64 * 1024);  // the API takes no bodies
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, "Internal error: " + what);
  });
  // Anything no route answered (a POST, a 404 from httplib itself) gets a JSON error too.
  svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    send_error(res, res.status, "The request was refused (HTTP " + std::to_string(res.status) + ").");
  });
  // httplib's default sets SO_REUSEPORT, which lets a second `memrec view` bind
  // the same port and take half its requests. SO_REUSEADDR alone still allows a
  // restart while old connections linger in TIME_WAIT, but refuses a live listener.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  add_routes(svr, data);
  int port = options.port;
  if (port == 0) {
    port = svr.bind_to_any_port(options.host);
    if (port < 0) port = -1;
  } else if (!svr.bind_to_port(options.host, port)) {
    port = -1;
  }
  if (port < 0) {
    error = "cannot listen on " + options.host + ":" + std::to_string(options.port) +
            " (in use, or not an address of this machine): pick another with --port or --host";
    return false;
  }
  // Bound to loopback, answer only requests that name it: a page on another
  // site cannot reach the dumps by pointing its own name at 127.0.0.1 (DNS rebinding).
  if (options.host == "127.0.0.1" || options.host == "::1" || options.host == "localhost") {
    const std::string p = ":" + std::to_string(port);
    std::vector<std::string> allowed = {"127.0.0.1" + p, "localhost" + p, "[::1]" + p};
    svr.set_pre_routing_handler([allowed](const httplib::Request& req, httplib::Response& res) {
      const std::string host = req.get_header_value("Host");
      if (std::find(allowed.begin(), allowed.end(), host) != allowed.end())
        return httplib::Server::HandlerResponse::Unhandled;
      send_error(res, 403, "The Host header must name this machine's loopback address and port.");
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  if (options.stop != nullptr) *options.stop = [&svr] { svr.stop(); };
  on_listening(port);
  if (!svr.listen_after_bind()) {
    error = "the server stopped unexpectedly";
    return false;
  }
  return true;
}

}  // namespace memrec::analyzer::server
