// The web UI's files, compiled into `memrec` (webui/embed_assets.py writes
// the definitions at build time), so an installed memrec needs no node.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace memrec::analyzer::server {

struct EmbeddedAsset {
  std::string_view path;  // "/index.html", "/app.js", ...
  std::string_view content_type;
  std::span<const unsigned char> bytes;
};

std::span<const EmbeddedAsset> embedded_assets();
// The asset at `path`, or nullptr.
const EmbeddedAsset* find_asset(std::string_view path);

}  // namespace memrec::analyzer::server
