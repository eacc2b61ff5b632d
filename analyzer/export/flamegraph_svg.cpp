// `memrec export --format svg`: one standalone SVG flamegraph with its script
// inline (click a frame to zoom, "Search" to highlight a regex, "Reset zoom"),
// no external resources, so it opens in any browser offline. Every name
// from a dump goes through xml_escape: symbol names and paths are arbitrary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "export/export_writers.h"
#include "reports/flame_tree.h"

namespace memrec::analyzer {
namespace {

constexpr double kWidth = 1200;
constexpr double kFrameHeight = 16;
constexpr double kTop = 36;  // room for the title and buttons
// Frames narrower than this are not drawn, as flamegraph.pl's --minwidth: all
// of cc1plus's 155,000 sites drawn made a 306 MB file no browser opens.
constexpr double kMinWidth = 0.1;

using Tree = FlameTree<1>;

std::string xml_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\t') ? '?' : c;
    }
  }
  return out;
}

// The depth of what is drawn; `hidden` counts the frames left out, each with
// everything above it.
std::size_t depth_of(const Tree& t, std::uint32_t n, std::uint64_t min_value, std::uint64_t& hidden) {
  std::size_t d = 0;
  for (const std::uint32_t child : t.children(n)) {
    if (t.node(child).value[0] < min_value) {
      ++hidden;
      continue;
    }
    d = std::max(d, depth_of(t, child, min_value, hidden));
  }
  return d + 1;
}

// A stable warm colour from the name, like flamegraph.pl's "hot" palette.
std::string colour(const std::string& name) {
  std::uint32_t h = 2166136261u;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return fmt::format("rgb({},{},{})", 205 + h % 50, (h >> 8) % 180, (h >> 16) % 55);
}

void emit(const Tree& t, std::uint32_t n, double x, std::size_t depth, std::size_t max_depth, std::uint64_t total,
          std::uint64_t min_value, bool bytes, std::string& out) {
  const std::uint64_t value = t.node(n).value[0];
  const double w = total == 0 ? 0 : kWidth * static_cast<double>(value) / static_cast<double>(total);
  const double y = kTop + static_cast<double>(max_depth - depth - 1) * kFrameHeight;
  const std::string name = xml_escape(t.name(n));
  const double pct = total == 0 ? 0 : 100.0 * static_cast<double>(value) / static_cast<double>(total);
  out += fmt::format(
      "<g class=\"f\"><title>{} ({} {}, {:.2f}%)</title><rect x=\"{:.3f}\" y=\"{:.1f}\" width=\"{:.3f}\" "
      "height=\"{}\" fill=\"{}\" rx=\"2\"/><text x=\"{:.3f}\" y=\"{:.1f}\">{}</text></g>\n",
      name, value, bytes ? "bytes" : "allocations", pct, x, y, w, kFrameHeight - 1, colour(t.name(n)), x + 3, y + 11.5,
      name);
  double cx = x;
  for (const std::uint32_t child : t.children(n)) {  // in the order of their names
    const std::uint64_t v = t.node(child).value[0];
    if (v >= min_value) emit(t, child, cx, depth + 1, max_depth, total, min_value, bytes, out);
    cx += total == 0 ? 0 : kWidth * static_cast<double>(v) / static_cast<double>(total);
  }
}

// Zoom keeps original geometry in data-x/data-w; text is clipped to its box.
constexpr const char* kScript = R"JS(
var W = 1200, zoomed = null;
function frames() { return Array.prototype.slice.call(document.querySelectorAll("g.f")); }
function init() {
  frames().forEach(function (g) {
    var r = g.querySelector("rect");
    g.dataset.x = r.getAttribute("x"); g.dataset.w = r.getAttribute("width");
    g.dataset.name = g.querySelector("text").textContent;
    g.addEventListener("click", function () { zoom(g); });
  });
  document.getElementById("reset").addEventListener("click", function () { zoom(null); });
  document.getElementById("search").addEventListener("click", search);
  layout(0, W);
}
function fit(g) {
  var r = g.querySelector("rect"), t = g.querySelector("text");
  var w = parseFloat(r.getAttribute("width")), name = g.dataset.name, n = Math.floor((w - 6) / 7);
  t.setAttribute("x", parseFloat(r.getAttribute("x")) + 3);
  t.textContent = n < 3 ? "" : (name.length <= n ? name : name.slice(0, n - 2) + "..");
}
function layout(x0, w0) {
  frames().forEach(function (g) {
    var x = parseFloat(g.dataset.x), w = parseFloat(g.dataset.w), r = g.querySelector("rect");
    var nx = (x - x0) * W / w0, nw = w * W / w0;
    var visible = x + w > x0 + 1e-6 && x < x0 + w0 - 1e-6;
    g.style.display = visible ? "" : "none";
    r.setAttribute("x", Math.max(0, nx)); r.setAttribute("width", Math.min(W, nw));
    fit(g);
  });
}
function zoom(g) {
  zoomed = g;
  if (!g) { layout(0, W); return; }
  layout(parseFloat(g.dataset.x), parseFloat(g.dataset.w));
}
function search() {
  var term = prompt("Search frames (regular expression):", "");
  if (term === null) return;
  var re, matched = 0;
  try { re = new RegExp(term); } catch (e) { alert("Not a regular expression: " + e.message); return; }
  frames().forEach(function (g) {
    var r = g.querySelector("rect"), hit = term !== "" && re.test(g.dataset.name);
    if (!r.dataset.fill) r.dataset.fill = r.getAttribute("fill");
    r.setAttribute("fill", hit ? "rgb(230,0,230)" : r.dataset.fill);
    if (hit) matched++;
  });
  document.getElementById("matched").textContent = term === "" ? "" : "Matched: " + matched + " frames";
}
window.addEventListener("load", init);
)JS";

}  // namespace

std::string export_svg(const std::vector<const HeapReport*>& reports, ExportMetric metric) {
  Tree tree(fmt::format("all ({})", export_metric_name(metric)));
  for (const HeapReport* r : reports) {
    const std::string process = reports.size() > 1 ? process_frame_name(*r) : std::string();
    for (const CallSite& site : r->sites.sites) {
      const std::uint64_t value = site_value(site, metric);
      if (value != 0) tree.add(r->sites, site, value, 0, process);
    }
  }
  tree.sort_children();
  const std::uint64_t total = tree.node(0).value[0];
  // The least value drawn: kMinWidth of kWidth, rounded up.
  const auto min_value = static_cast<std::uint64_t>(std::ceil(static_cast<double>(total) * kMinWidth / kWidth));
  std::uint64_t hidden = 0;
  const std::size_t max_depth = depth_of(tree, 0, min_value, hidden);
  const double height = kTop + static_cast<double>(max_depth) * kFrameHeight + 8;
  std::string out = fmt::format(
      "<?xml version=\"1.0\" standalone=\"no\"?>\n"
      "<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n"
      "<style>text {{ font: 12px monospace; fill: #000; }} g.f text {{ pointer-events: none; }} g.f:hover rect {{ "
      "stroke: #000; "
      "}} .b {{ cursor: pointer; fill: #036; }}</style>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fdf6e8\"/>\n"
      "<text x=\"{2}\" y=\"16\" text-anchor=\"middle\" style=\"font-size:15px\">memrec: {3}</text>\n"
      "<text id=\"reset\" class=\"b\" x=\"6\" y=\"30\">Reset zoom</text>\n"
      "<text id=\"search\" class=\"b\" x=\"{4}\" y=\"30\" text-anchor=\"end\">Search</text>\n"
      "<text id=\"matched\" x=\"{5}\" y=\"30\" text-anchor=\"end\"></text>\n",
      kWidth, height, kWidth / 2, xml_escape(tree.name(0)), kWidth - 6, kWidth - 70);
  if (hidden != 0) {
    out += fmt::format(
        "<text id=\"hidden\" x=\"{}\" y=\"30\" text-anchor=\"middle\">{} frames narrower than {} px not drawn</text>\n",
        kWidth / 2, hidden, kMinWidth);
  }
  emit(tree, 0, 0, 0, max_depth, total, min_value, metric_is_bytes(metric), out);
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += kScript;
  out += "]]></script>\n</svg>\n";
  return out;
}

}  // namespace memrec::analyzer
