// Serves the web UI and its JSON API (docs/api.md) over HTTP with
// cpp-httplib. Only view_command.cpp calls it; the answers come from
// view_api.h. It never lets an exception or a bad request end the server.
#pragma once

#include <functional>
#include <string>

#include "server/view_api.h"

namespace memrec::analyzer::server {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 9999;  // 0: any free port
  // When set, serve() puts here, before on_listening, a function that makes
  // it return true; callable once, from any thread, while serve() runs.
  std::function<void()>* stop = nullptr;
};

// Binds, calls `on_listening(port)` once bound, then serves until the
// process ends. Returns false (with `error` set) if it could not bind.
bool serve(const ViewData& data, const ServeOptions& options, const std::function<void(int)>& on_listening,
           std::string& error);

}  // namespace memrec::analyzer::server
